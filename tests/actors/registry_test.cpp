#include "actors/registry.hpp"

#include <gtest/gtest.h>

#include "core/errors.hpp"
#include "tests/actors/registry_fixture.hpp"

using namespace berth;
using namespace std::chrono_literals;
using berth::test::registry_test;
using berth::test::csi_spec;
using berth::test::snapshot_of;
using berth::test::code_of;
using berth::test::mib;

TEST_F(registry_test, creates_lists_and_removes_volumes) {
  start();
  EXPECT_FALSE(test::call<atom::ok>(self, reg, atom::create_v, std::string{"b"}, option_map{}));
  EXPECT_FALSE(test::call<atom::ok>(self, reg, atom::create_v, std::string{"a"}, option_map{}));
  auto all = list();
  ASSERT_EQ(all.size(), 2u);
  EXPECT_EQ(all[0].name, "a");
  EXPECT_EQ(all[1].name, "b");
  EXPECT_FALSE(test::call<atom::ok>(self, reg, atom::remove_v, std::string{"a"},
                                    record_owner::docker, record_kind::volume));
  EXPECT_EQ(list().size(), 1u);
  auto err = test::call<atom::ok>(self, reg, atom::remove_v, std::string{"a"},
                                    record_owner::docker, record_kind::volume);
  ASSERT_TRUE(err);
  EXPECT_EQ(err.code(), static_cast<uint8_t>(ec::not_found));
}

TEST_F(registry_test, bad_names_and_options_are_refused_and_change_nothing) {
  start();
  auto err = test::call<atom::ok>(self, reg, atom::create_v, std::string{"../etc"}, option_map{});
  ASSERT_TRUE(err);
  EXPECT_NE(describe(err).find("invalid volume name \"../etc\""), std::string::npos);
  err = test::call<atom::ok>(self, reg, atom::create_v, std::string{"v"},
                             option_map{{"bogus", "1"}});
  ASSERT_TRUE(err);
  EXPECT_NE(describe(err).find("bogus"), std::string::npos);
  EXPECT_TRUE(list().empty());
  EXPECT_EQ(storage->creates, 0);
}

TEST_F(registry_test, mount_of_an_unknown_volume_is_not_found) {
  start();
  auto err = test::call<std::string>(self, reg, atom::mount_v, std::string{"nope"},
                                     std::string{"c1"}, std::string{}, caller{});
  ASSERT_TRUE(err);
  EXPECT_EQ(describe(err), "no such volume: nope");
}

TEST_F(registry_test, a_name_can_be_created_again_after_remove) {
  start();
  EXPECT_FALSE(test::call<atom::ok>(self, reg, atom::create_v, std::string{"v"}, option_map{}));
  EXPECT_FALSE(test::call<atom::ok>(self, reg, atom::remove_v, std::string{"v"},
                                    record_owner::docker, record_kind::volume));
  EXPECT_FALSE(test::call<atom::ok>(self, reg, atom::create_v, std::string{"v"},
                                    option_map{{"type", "tmpfs"}}));
  auto all = list();
  ASSERT_EQ(all.size(), 1u);
  EXPECT_EQ(all[0].options.at("type"), "tmpfs");
}

TEST_F(registry_test, a_failed_create_leaves_no_name_behind) {
  start();
  disk->fail = true;
  EXPECT_TRUE(test::call<atom::ok>(self, reg, atom::create_v, std::string{"v"}, option_map{}));
  disk->fail = false;
  EXPECT_TRUE(list().empty());
  EXPECT_EQ(storage->removes, 1) << "the created storage is undone";
  EXPECT_TRUE(
    test::call<std::string>(self, reg, atom::mount_v,
                            std::string{"v"}, std::string{"c"}, std::string{}, caller{}));
}

TEST_F(registry_test, serves_loaded_state_with_its_counts) {
  volume_record rec;
  rec.name = "old";
  rec.mounts = {{"c1", 2}};
  rec.mounted = true;
  rec.mountpoint = "/fake/old";
  start({rec});
  EXPECT_FALSE(
    test::call<atom::ok>(self, reg, atom::unmount_v, std::string{"old"}, std::string{"c1"}));
  EXPECT_EQ(storage->unmounts, 0);
  EXPECT_FALSE(
    test::call<atom::ok>(self, reg, atom::unmount_v, std::string{"old"}, std::string{"c1"}));
  EXPECT_EQ(storage->unmounts, 1);
}

// -- CSI create with a content source --------------------------------------------------

TEST_F(registry_test, a_csi_create_from_a_missing_source_is_not_found) {
  start();
  auto err = test::call<volume_record>(self, reg, atom::create_v, std::string{"r"},
                                       csi_spec(0, snapshot_source("ghost")));
  ASSERT_TRUE(err);
  EXPECT_EQ(err.code(), code_of(ec::not_found)) << describe(err);
  EXPECT_NE(describe(err).find("snapshot:ghost"), std::string::npos);
  err = test::call<volume_record>(self, reg, atom::create_v, std::string{"s"},
                                  snapshot_of("ghost"));
  ASSERT_TRUE(err);
  EXPECT_EQ(err.code(), code_of(ec::not_found)) << describe(err);
  EXPECT_TRUE(list().empty());
  EXPECT_EQ(storage->creates, 0);
}

TEST_F(registry_test, a_snapshot_of_a_volume_gets_the_volumes_capacity) {
  start();
  auto vol = test::ask<volume_record>(self, reg, atom::create_v, std::string{"v"},
                                      csi_spec(12 * mib));
  ASSERT_TRUE(vol) << describe(vol.error());
  auto snap = test::ask<volume_record>(self, reg, atom::create_v, std::string{"s"},
                                       snapshot_of("v"));
  ASSERT_TRUE(snap) << describe(snap.error());
  EXPECT_EQ(snap->kind, record_kind::snapshot);
  EXPECT_EQ(snap->source, volume_source("v"));
  EXPECT_EQ(snap->capacity_bytes, 12 * mib);
  auto all = list();
  ASSERT_EQ(all.size(), 2u);
  EXPECT_EQ(all[0].name, "s");
}

TEST_F(registry_test, a_volume_from_a_snapshot_is_at_least_the_snapshots_size) {
  start();
  ASSERT_FALSE(test::call<volume_record>(self, reg, atom::create_v, std::string{"v"},
                                         csi_spec(12 * mib)));
  ASSERT_FALSE(test::call<volume_record>(self, reg, atom::create_v, std::string{"s"},
                                         snapshot_of("v")));
  auto err = test::call<volume_record>(self, reg, atom::create_v, std::string{"small"},
                                       csi_spec(8 * mib, snapshot_source("s")));
  ASSERT_TRUE(err);
  EXPECT_EQ(err.code(), code_of(ec::out_of_range)) << describe(err);
  EXPECT_TRUE(test::call<volume_record>(self, reg, atom::get_v, std::string{"small"}))
    << "a refused create leaves no name behind";
  auto restored = test::ask<volume_record>(self, reg, atom::create_v, std::string{"r"},
                                           csi_spec(0, snapshot_source("s")));
  ASSERT_TRUE(restored) << describe(restored.error());
  EXPECT_EQ(restored->capacity_bytes, 12 * mib) << "an unset size is the snapshot's";
  EXPECT_EQ(restored->source, snapshot_source("s"));
}

TEST_F(registry_test, a_source_of_the_wrong_kind_is_not_found) {
  start();
  ASSERT_FALSE(test::call<volume_record>(self, reg, atom::create_v, std::string{"v"},
                                         csi_spec(12 * mib)));
  ASSERT_FALSE(test::call<volume_record>(self, reg, atom::create_v, std::string{"s"},
                                         snapshot_of("v")));
  auto err = test::call<volume_record>(self, reg, atom::create_v, std::string{"r"},
                                       csi_spec(0, snapshot_source("v")));
  ASSERT_TRUE(err);
  EXPECT_EQ(err.code(), code_of(ec::not_found)) << describe(err);
  err = test::call<volume_record>(self, reg, atom::create_v, std::string{"s2"}, snapshot_of("s"));
  ASSERT_TRUE(err);
  EXPECT_EQ(err.code(), code_of(ec::not_found)) << "a snapshot of a snapshot: " << describe(err);
  EXPECT_EQ(list().size(), 2u);
}

// A source of another kind or without a kind ("disk:v", "v") cannot be built any
// more (content_source is typed; parse_content_source refuses them, see
// record_kind_test). What is left to refuse is a volume made from itself.
TEST_F(registry_test, a_content_source_naming_the_new_volume_is_an_invalid_argument) {
  start();
  ASSERT_FALSE(test::call<volume_record>(self, reg, atom::create_v, std::string{"v"},
                                         csi_spec(12 * mib)));
  for (const auto& source : {volume_source("r"), snapshot_source("r")}) {
    auto err = test::call<volume_record>(self, reg, atom::create_v, std::string{"r"},
                                         csi_spec(0, source));
    ASSERT_TRUE(err) << source.describe();
    EXPECT_EQ(err.code(), code_of(ec::invalid_argument)) << source.describe() << ": "
                                                         << describe(err);
    EXPECT_NE(describe(err).find(source.describe()), std::string::npos) << describe(err);
  }
  EXPECT_EQ(list().size(), 1u);
}

TEST_F(registry_test, a_csi_create_on_an_unknown_backend_is_an_invalid_argument) {
  start();
  auto spec = csi_spec(12 * mib);
  spec.backend = "nope";
  auto err = test::call<volume_record>(self, reg, atom::create_v, std::string{"v"}, spec);
  ASSERT_TRUE(err);
  EXPECT_EQ(err.code(), code_of(ec::invalid_argument)) << describe(err);
  EXPECT_NE(describe(err).find("nope"), std::string::npos);
  EXPECT_TRUE(list().empty());
  EXPECT_EQ(storage->creates, 0);
}

TEST_F(registry_test, csi_requests_reach_the_named_volume) {
  start();
  ASSERT_FALSE(test::call<volume_record>(self, reg, atom::create_v, std::string{"v"},
                                         csi_spec(12 * mib)));
  stage_request req;
  req.staging_path = "/stage/v";
  EXPECT_FALSE(test::call<atom::ok>(self, reg, atom::stage_v, std::string{"v"}, req));
  auto err = test::call<atom::ok>(self, reg, atom::stage_v, std::string{"w"}, req);
  ASSERT_TRUE(err);
  EXPECT_EQ(err.code(), code_of(ec::not_found));
  auto rec = test::ask<volume_record>(self, reg, atom::get_v, std::string{"v"});
  ASSERT_TRUE(rec);
  EXPECT_EQ(rec->staging_path, "/stage/v");
}

// -- Docker and CSI are separate namespaces (docs/design.md, "Only what berth owns") ---

namespace {

ec code_of_error(const caf::error& err) {
  return static_cast<ec>(err.code());
}

} // namespace

TEST_F(registry_test, docker_sees_and_touches_no_csi_volume) {
  start();
  ASSERT_TRUE(test::ask<volume_record>(self, reg, atom::create_v, std::string{"pv1"}, csi_spec(0)));
  ASSERT_FALSE(test::call<atom::ok>(self, reg, atom::create_v, std::string{"d1"}, option_map{}));
  auto docker_list = test::ask<shared_records>(self, reg, atom::list_v, record_owner::docker);
  ASSERT_TRUE(docker_list);
  ASSERT_EQ(docker_list->size(), 1u);
  EXPECT_EQ((*docker_list)[0]->name, "d1");
  auto removed = test::call<atom::ok>(self, reg, atom::remove_v, std::string{"pv1"},
                                      record_owner::docker, record_kind::volume);
  ASSERT_TRUE(removed);
  EXPECT_EQ(code_of_error(removed), ec::not_found);
  EXPECT_EQ(describe(removed), "no such volume: pv1");
  auto mounted = test::call<std::string>(self, reg, atom::mount_v, std::string{"pv1"},
                                         std::string{"c1"}, std::string{}, caller{});
  EXPECT_EQ(code_of_error(mounted), ec::not_found);
  EXPECT_EQ(code_of_error(test::call<atom::ok>(self, reg, atom::unmount_v, std::string{"pv1"},
                                         std::string{"c1"})),
            ec::not_found);
  EXPECT_EQ(code_of_error(test::call<volume_record>(self, reg, atom::get_v, std::string{"pv1"},
                                              record_owner::docker)),
            ec::not_found);
  auto taken = test::call<atom::ok>(self, reg, atom::create_v, std::string{"pv1"}, option_map{});
  EXPECT_EQ(code_of_error(taken), ec::already_exists);
  EXPECT_NE(describe(taken).find("CSI"), std::string::npos) << describe(taken);
  EXPECT_EQ(storage->removes, 0);
  EXPECT_EQ(storage->mounts, 0);
  auto rec = test::ask<volume_record>(self, reg, atom::get_v, std::string{"pv1"},
                                      record_owner::csi);
  ASSERT_TRUE(rec) << "the CSI volume survives";
  EXPECT_EQ(rec->owner, record_owner::csi);
  EXPECT_EQ(list().size(), 2u) << "the admin API sees both";
}

TEST_F(registry_test, csi_sees_and_touches_no_docker_volume) {
  start();
  ASSERT_FALSE(test::call<atom::ok>(self, reg, atom::create_v, std::string{"d1"}, option_map{}));
  auto csi_list = test::ask<shared_records>(self, reg, atom::list_v, record_owner::csi);
  ASSERT_TRUE(csi_list);
  EXPECT_TRUE(csi_list->empty());
  auto taken = test::ask<volume_record>(self, reg, atom::create_v, std::string{"d1"}, csi_spec(0));
  ASSERT_FALSE(taken);
  EXPECT_EQ(code_of_error(taken.error()), ec::already_exists);
  EXPECT_EQ(code_of_error(test::call<atom::ok>(self, reg, atom::remove_v, std::string{"d1"},
                                         record_owner::csi, record_kind::volume)),
            ec::not_found);
  stage_request stage;
  stage.staging_path = "/k/stage";
  EXPECT_EQ(code_of_error(test::call<atom::ok>(self, reg, atom::stage_v, std::string{"d1"}, stage)),
            ec::not_found);
  modify_request grow;
  grow.required_bytes = uint64_t{1} << 30;
  grow.owner = record_owner::csi;
  EXPECT_EQ(code_of_error(test::call<volume_record>(self, reg, atom::modify_v, std::string{"d1"},
                                                    grow)),
            ec::not_found)
    << "a CSI expand (a modify by owner csi) of a Docker volume";
  volume_spec from = csi_spec(0);
  from.source = volume_source("d1");
  auto copy = test::ask<volume_record>(self, reg, atom::create_v, std::string{"c2"}, from);
  ASSERT_FALSE(copy) << "a Docker volume is no CSI content source";
  EXPECT_EQ(code_of_error(copy.error()), ec::not_found);
  EXPECT_EQ(storage->stages, 0);
  EXPECT_EQ(storage->removes, 0);
  EXPECT_EQ(storage->creates, 1);
  EXPECT_TRUE(test::ask<volume_record>(self, reg, atom::get_v, std::string{"d1"},
                                       record_owner::docker));
}

TEST_F(registry_test, an_older_record_without_owner_is_placed_by_its_fields) {
  volume_record docker_vol;
  docker_vol.name = "old-docker";
  docker_vol.mounts = {{"c1", 1}};
  docker_vol.mounted = true;
  docker_vol.mountpoint = "/fake/old";
  volume_record csi_vol;
  csi_vol.name = "old-csi";
  csi_vol.capacity_bytes = 1 << 20;
  start({docker_vol, csi_vol});
  auto docker_list = test::ask<shared_records>(self, reg, atom::list_v, record_owner::docker);
  ASSERT_TRUE(docker_list);
  ASSERT_EQ(docker_list->size(), 1u);
  EXPECT_EQ((*docker_list)[0]->name, "old-docker");
  EXPECT_EQ(code_of_error(test::call<atom::ok>(self, reg, atom::remove_v, std::string{"old-csi"},
                                         record_owner::docker, record_kind::volume)),
            ec::not_found);
}
