#include "actors/volume_rules.hpp"

#include <gtest/gtest.h>

#include "core/errors.hpp"
#include "core/limits.hpp"

using namespace berth;

namespace {

volume_record mounted_by(std::map<std::string, uint32_t> counts) {
  volume_record rec;
  rec.name = "v1";
  rec.mounts = std::move(counts);
  rec.mounted = !rec.mounts.empty();
  rec.mountpoint = rec.mounted ? "/mnt/v1" : "";
  return rec;
}

/// A Mount by no identified dockerd, at a fixed instant.
mount_action count(volume_record& rec, const std::string& id) {
  return apply_mount(rec, id, "", release_clock::time_point{std::chrono::seconds{1000}}).action;
}

} // namespace

TEST(volume_rules, no_such_volume_names_the_volume_and_why) {
  auto err = no_such_volume("v1");
  EXPECT_TRUE(is(err, ec::not_found));
  EXPECT_EQ(describe(err), "no such volume: v1");
  auto snap = no_such_volume("s1", "it is a snapshot");
  EXPECT_TRUE(is(snap, ec::not_found));
  EXPECT_EQ(describe(snap), "no such volume: s1 (it is a snapshot)");
}

TEST(volume_rules, first_mount_mounts_the_host_later_ones_only_count) {
  auto rec = mounted_by({});
  EXPECT_EQ(count(rec, "c1"), mount_action::mount_host);
  set_mounted(rec, "/mnt/v1");
  EXPECT_EQ(count(rec, "c2"), mount_action::count_only);
  EXPECT_EQ(count(rec, "c1"), mount_action::count_only);
  EXPECT_EQ(rec.mounts.at("c1"), 2u);
  EXPECT_EQ(total_mounts(rec), 3u);
}

TEST(volume_rules, docker_cp_mount_and_unmount_with_the_same_id_keeps_the_mount) {
  // dockerd mounts with the container's ID again for `docker cp` (docs/design.md, "One
  // count per mount ID").
  auto rec = mounted_by({{"c1", 1}});
  EXPECT_EQ(count(rec, "c1"), mount_action::count_only);
  EXPECT_EQ(apply_unmount(rec, "c1"), unmount_action::count_only);
  EXPECT_EQ(rec.mounts.at("c1"), 1u);
  EXPECT_EQ(apply_unmount(rec, "c1"), unmount_action::unmount_host);
  EXPECT_TRUE(rec.mounts.empty());
}

TEST(volume_rules, last_unmount_across_ids_unmounts) {
  auto rec = mounted_by({{"a", 1}, {"b", 1}});
  EXPECT_EQ(apply_unmount(rec, "a"), unmount_action::count_only);
  EXPECT_EQ(apply_unmount(rec, "b"), unmount_action::unmount_host);
}

TEST(volume_rules, the_last_unmount_of_an_id_drops_its_origin_too) {
  auto rec = mounted_by({{"a", 2}, {"b", 1}});
  rec.origins = {{"a", mount_id_origin{"1@2", 10}}, {"b", mount_id_origin{"1@2", 11}}};
  EXPECT_EQ(apply_unmount(rec, "a"), unmount_action::count_only);
  EXPECT_EQ(rec.origins.count("a"), 1u) << "a still counts once: its origin stays";
  EXPECT_EQ(apply_unmount(rec, "a"), unmount_action::count_only);
  EXPECT_EQ(rec.origins.count("a"), 0u) << "keys(origins) must stay within keys(mounts)";
  EXPECT_EQ(apply_unmount(rec, "b"), unmount_action::unmount_host);
  EXPECT_TRUE(rec.origins.empty());
}

TEST(volume_rules, unmount_of_an_unknown_id_changes_nothing) {
  auto rec = mounted_by({{"a", 1}});
  auto before = rec;
  EXPECT_EQ(apply_unmount(rec, "zzz"), unmount_action::unknown_id);
  EXPECT_EQ(rec, before);
}

TEST(volume_rules, remove_is_refused_while_any_id_holds_the_volume) {
  auto rec = mounted_by({{"abcdef0123456789", 2}});
  auto err = check_remove(rec);
  ASSERT_TRUE(err);
  EXPECT_EQ(err.code(), static_cast<uint8_t>(ec::in_use));
  EXPECT_NE(describe(err).find("volume in use"), std::string::npos);
  EXPECT_NE(describe(err).find("abcdef012345:2"), std::string::npos);
  EXPECT_FALSE(check_remove(mounted_by({})));
}

TEST(volume_rules, recreate_is_idempotent_only_with_equal_options) {
  auto rec = mounted_by({});
  rec.options = {{"type", "tmpfs"}};
  EXPECT_FALSE(check_recreate(rec, {{"type", "tmpfs"}}));
  auto err = check_recreate(rec, {{"type", "nfs"}});
  ASSERT_TRUE(err);
  EXPECT_EQ(err.code(), static_cast<uint8_t>(ec::already_exists));
}

TEST(volume_rules, unmounted_clears_the_mountpoint) {
  auto rec = mounted_by({{"a", 1}});
  set_unmounted(rec);
  EXPECT_FALSE(rec.mounted);
  EXPECT_TRUE(rec.mountpoint.empty());
}

// -- Docker and CSI are separate namespaces (docs/design.md, "Only what berth owns") ---

TEST(volume_rules, a_record_is_seen_only_by_its_own_namespace) {
  volume_record docker_vol;
  docker_vol.name = "d1";
  docker_vol.owner = record_owner::docker;
  volume_record csi_vol;
  csi_vol.name = "c1";
  csi_vol.owner = record_owner::csi;
  EXPECT_FALSE(check_owner(docker_vol, record_owner::docker, false));
  EXPECT_FALSE(check_owner(csi_vol, record_owner::csi, true));
  auto hidden = check_owner(csi_vol, record_owner::docker, false);
  ASSERT_TRUE(hidden);
  EXPECT_EQ(static_cast<ec>(hidden.code()), ec::not_found);
  EXPECT_EQ(describe(hidden), "no such volume: c1");
  hidden = check_owner(docker_vol, record_owner::csi, false);
  ASSERT_TRUE(hidden);
  EXPECT_EQ(static_cast<ec>(hidden.code()), ec::not_found);
  auto taken = check_owner(csi_vol, record_owner::docker, true);
  ASSERT_TRUE(taken);
  EXPECT_EQ(static_cast<ec>(taken.code()), ec::already_exists);
  EXPECT_NE(describe(taken).find("CSI"), std::string::npos) << describe(taken);
  taken = check_owner(docker_vol, record_owner::csi, true);
  ASSERT_TRUE(taken);
  EXPECT_EQ(static_cast<ec>(taken.code()), ec::already_exists);
  EXPECT_NE(describe(taken).find("Docker"), std::string::npos) << describe(taken);
}

TEST(volume_rules, distinct_mount_ids_per_volume_are_bounded) {
  auto rec = mounted_by({});
  for (size_t i = 0; i < limits::max_mount_ids; ++i) {
    auto id = "id" + std::to_string(i);
    ASSERT_FALSE(check_mount(rec, id)) << i;
    count(rec, id);
  }
  EXPECT_EQ(rec.mounts.size(), limits::max_mount_ids);
  auto err = check_mount(rec, "one-more");
  ASSERT_TRUE(err);
  EXPECT_EQ(static_cast<ec>(err.code()), ec::out_of_range);
  EXPECT_NE(describe(err).find(std::to_string(limits::max_mount_ids)), std::string::npos)
    << describe(err);
  EXPECT_FALSE(check_mount(rec, "id7")) << "another Mount of a counted ID still counts";
}

TEST(volume_rules, a_snapshot_is_never_mounted) {
  auto snap = mounted_by({});
  snap.kind = record_kind::snapshot;
  auto err = check_mount(snap, "c1");
  ASSERT_TRUE(err);
  EXPECT_EQ(static_cast<ec>(err.code()), ec::not_found);
  EXPECT_NE(describe(err).find("make a volume of it with -o from-snapshot="), std::string::npos)
    << describe(err);
}

// -- origins: who made each count (docs/design.md, "Mount IDs dockerd forgot") --------

namespace {

release_clock::time_point at_ms(int64_t ms) {
  return release_clock::time_point{std::chrono::milliseconds{ms}};
}

} // namespace

TEST(volume_rules, a_mount_records_who_made_the_count_and_when) {
  auto rec = mounted_by({});
  auto first = apply_mount(rec, "c1", "4242@77", at_ms(5000));
  EXPECT_EQ(first.action, mount_action::mount_host);
  EXPECT_EQ(first.count, 1u);
  EXPECT_EQ(first.replaced, 0u);
  EXPECT_EQ(rec.origins.at("c1"), (mount_id_origin{"4242@77", 5000}));
  set_mounted(rec, "/mnt/v1");
  auto again = apply_mount(rec, "c1", "4242@77", at_ms(6000));
  EXPECT_EQ(again.action, mount_action::count_only);
  EXPECT_EQ(again.count, 2u);
  EXPECT_EQ(rec.origins.at("c1"), (mount_id_origin{"4242@77", 6000}));
}

TEST(volume_rules, a_mount_from_a_new_dockerd_replaces_the_older_ones_counts) {
  // A --restart always container mounts again with the ID kept in config.v2.json.
  auto rec = mounted_by({{"c1", 1}});
  rec.origins["c1"] = mount_id_origin{"4242@77", 5000};
  auto effect = apply_mount(rec, "c1", "5151@99", at_ms(9000));
  EXPECT_EQ(effect.count, 1u) << "not 2: the old dockerd's count was stale";
  EXPECT_EQ(effect.replaced, 1u);
  EXPECT_EQ(rec.mounts.at("c1"), 1u);
  EXPECT_EQ(rec.origins.at("c1"), (mount_id_origin{"5151@99", 9000}));
}

TEST(volume_rules, an_unidentified_mount_adds_and_the_mixed_count_has_no_instance) {
  auto rec = mounted_by({{"c1", 1}});
  rec.origins["c1"] = mount_id_origin{"4242@77", 5000};
  auto effect = apply_mount(rec, "c1", "", at_ms(6000));
  EXPECT_EQ(effect.count, 2u) << "berth cannot tell callers apart: it never undercounts";
  EXPECT_EQ(effect.replaced, 0u);
  EXPECT_EQ(rec.origins.at("c1"), (mount_id_origin{"", 6000}));
}

TEST(volume_rules, a_counted_id_without_an_origin_gets_one_at_its_next_mount) {
  auto rec = mounted_by({{"old", 1}}); // state from before berth recorded origins
  auto effect = apply_mount(rec, "old", "4242@77", at_ms(6000));
  EXPECT_EQ(effect.count, 2u);
  EXPECT_EQ(rec.origins.at("old"), (mount_id_origin{"", 6000})) << "a mixed count";
}

TEST(volume_rules, every_mount_moves_the_origin_forward_even_within_one_millisecond) {
  // A release decided on the origin before a Mount must see that the Mount came.
  auto rec = mounted_by({});
  apply_mount(rec, "c1", "4242@77", at_ms(5000));
  auto before = rec.origins.at("c1");
  apply_mount(rec, "c1", "4242@77", at_ms(5000));
  EXPECT_NE(rec.origins.at("c1"), before);
  EXPECT_EQ(rec.origins.at("c1").last_mounted_ms, 5001);
  apply_mount(rec, "c1", "4242@77", at_ms(1000)); // the clock stepped back
  EXPECT_EQ(rec.origins.at("c1").last_mounted_ms, 5002);
}

TEST(volume_rules, dropping_an_id_drops_its_whole_count_and_origin) {
  auto rec = mounted_by({{"a", 3}, {"b", 1}});
  rec.origins = {{"a", mount_id_origin{"1@2", 10}}, {"b", mount_id_origin{"1@2", 11}}};
  EXPECT_EQ(drop_mount_id(rec, "a"), 3u);
  EXPECT_EQ(rec.mounts.count("a"), 0u);
  EXPECT_EQ(rec.origins.count("a"), 0u);
  EXPECT_EQ(rec.mounts.at("b"), 1u);
  EXPECT_EQ(drop_mount_id(rec, "zzz"), 0u);
  EXPECT_EQ(rec.origins.size(), 1u);
}
