// The CSI rules of the node side (actors/csi_rules.hpp): stage and unstage, publish and
// unpublish, and the paths a volume answers at. The controller side's are csi_rules_test.

#include "actors/csi_rules.hpp"

#include <gtest/gtest.h>

#include "core/errors.hpp"
#include "core/limits.hpp"
#include "tests/actors/csi_rules_fixture.hpp"

using namespace berth;
using namespace berth::test;

// -- stage / unstage ---------------------------------------------------------------

TEST(csi_rules, stage_of_an_unstaged_volume_runs) {
  auto action = check_stage(block_volume(), stage_at("/stage/pvc-1"));
  ASSERT_TRUE(action);
  EXPECT_EQ(*action, csi_action::run);
}

TEST(csi_rules, stage_at_the_same_path_the_same_way_is_done) {
  auto action = check_stage(staged_volume(), stage_at("/stage/pvc-1", {"noatime"}));
  ASSERT_TRUE(action) << describe(action.error());
  EXPECT_EQ(*action, csi_action::done);
}

TEST(csi_rules, stage_at_the_same_path_another_way_already_exists) {
  expect_error(check_stage(staged_volume(), stage_at("/stage/pvc-1", {"ro"})), ec::already_exists,
               "noatime");
  auto block = stage_at("/stage/pvc-1");
  block.block = true;
  expect_error(check_stage(staged_volume(), block), ec::already_exists, "/stage/pvc-1");
}

TEST(csi_rules, stage_at_another_path_is_a_failed_precondition) {
  expect_error(check_stage(staged_volume(), stage_at("/stage/other", {"noatime"})),
               ec::failed_precondition, "/stage/other");
}

TEST(csi_rules, a_snapshot_cannot_be_staged_or_published) {
  auto snap = block_volume();
  snap.kind = record_kind::snapshot;
  expect_error(check_stage(snap, stage_at("/stage/pvc-1")), ec::not_found, "snapshot");
  expect_error(check_publish(snap, csi_publish("/pods/a")), ec::not_found, "snapshot");
  expect_error(check_volume_path(snap, "/stage/pvc-1"), ec::not_found, "snapshot");
}

TEST(csi_rules, set_staged_and_set_unstaged_fill_and_clear_the_staging_fields) {
  auto rec = staged_volume();
  EXPECT_EQ(rec.staging_path, "/stage/pvc-1");
  EXPECT_EQ(rec.stage_flags, std::vector<std::string>{"noatime"});
  EXPECT_EQ(rec.device, "/dev/loop3");
  EXPECT_FALSE(rec.staged_block);
  EXPECT_TRUE(in_csi_use(rec));
  set_unstaged(rec);
  EXPECT_EQ(rec, block_volume());
}

TEST(csi_rules, unstage_when_not_staged_or_staged_elsewhere_sweeps) {
  // A stage that landed after its caller gave up may have left a mount the record lacks.
  auto none = check_unstage(block_volume(), "/stage/pvc-1");
  ASSERT_TRUE(none);
  EXPECT_EQ(*none, csi_action::sweep);
  auto elsewhere = check_unstage(staged_volume(), "/stage/other");
  ASSERT_TRUE(elsewhere);
  EXPECT_EQ(*elsewhere, csi_action::sweep);
  auto snapshot = block_volume();
  snapshot.kind = record_kind::snapshot;
  auto never = check_unstage(snapshot, "/stage/pvc-1");
  ASSERT_TRUE(never);
  EXPECT_EQ(*never, csi_action::done) << "a snapshot is never staged";
  auto here = check_unstage(staged_volume(), "/stage/pvc-1");
  ASSERT_TRUE(here);
  EXPECT_EQ(*here, csi_action::run);
}

TEST(csi_rules, unstage_while_published_is_a_failed_precondition) {
  auto rec = staged_volume();
  rec.published["/pods/a"] = publication{};
  expect_error(check_unstage(rec, "/stage/pvc-1"), ec::failed_precondition, "/pods/a");
}

// -- publish / unpublish --------------------------------------------------------------

TEST(csi_rules, publish_before_stage_is_a_failed_precondition) {
  expect_error(check_publish(block_volume(), csi_publish("/pods/a")), ec::failed_precondition,
               "not staged");
}

TEST(csi_rules, publish_with_another_staging_path_is_a_failed_precondition) {
  auto req = csi_publish("/pods/a");
  req.staging_path = "/stage/other";
  expect_error(check_publish(staged_volume(), req), ec::failed_precondition, "/stage/other");
}

TEST(csi_rules, publish_block_of_a_mount_staging_and_back_is_a_failed_precondition) {
  auto block_req = csi_publish("/pods/dev");
  block_req.how.block = true;
  expect_error(check_publish(staged_volume(), block_req), ec::failed_precondition, "block");
  auto block_staged = block_volume();
  auto req = stage_at("/stage/pvc-1");
  req.block = true;
  set_staged(block_staged, req, "/dev/loop3");
  expect_error(check_publish(block_staged, csi_publish("/pods/a")), ec::failed_precondition,
               "mount");
  auto ok = check_publish(block_staged, block_req);
  ASSERT_TRUE(ok) << describe(ok.error());
  EXPECT_EQ(*ok, csi_action::run);
}

TEST(csi_rules, publish_at_a_new_target_runs_at_the_same_target_is_done) {
  auto rec = staged_volume();
  auto first = check_publish(rec, csi_publish("/pods/a"));
  ASSERT_TRUE(first) << describe(first.error());
  EXPECT_EQ(*first, csi_action::run);
  rec.published["/pods/a"] = csi_publish("/pods/a").how;
  auto again = check_publish(rec, csi_publish("/pods/a"));
  ASSERT_TRUE(again) << describe(again.error());
  EXPECT_EQ(*again, csi_action::done);
  auto other = check_publish(rec, csi_publish("/pods/b"));
  ASSERT_TRUE(other);
  EXPECT_EQ(*other, csi_action::run) << "a second target is another publication";
}

// limits::max_targets bounds the publications one record holds (records stay bounded).
TEST(csi_rules, publish_beyond_max_targets_is_resource_exhausted) {
  auto rec = staged_volume();
  for (size_t i = 0; i + 1 < limits::max_targets; ++i) {
    rec.published["/pods/" + std::to_string(i)] = csi_publish("/pods/x").how;
  }
  auto last = check_publish(rec, csi_publish("/pods/last"));
  ASSERT_TRUE(last) << describe(last.error());
  EXPECT_EQ(*last, csi_action::run) << "the target that reaches the bound is accepted";
  rec.published["/pods/last"] = csi_publish("/pods/last").how;
  ASSERT_EQ(rec.published.size(), limits::max_targets);
  expect_error(check_publish(rec, csi_publish("/pods/over")), ec::resource_exhausted,
               std::to_string(limits::max_targets));
  auto again = check_publish(rec, csi_publish("/pods/last"));
  ASSERT_TRUE(again) << describe(again.error());
  EXPECT_EQ(*again, csi_action::done) << "a target already published stays idempotent";
}

TEST(csi_rules, a_repeated_publish_is_done_whoever_created_the_target) {
  auto rec = staged_volume();
  auto made = csi_publish("/pods/a").how;
  made.created = true; // what the record keeps; a request never carries it
  rec.published["/pods/a"] = made;
  auto again = check_publish(rec, csi_publish("/pods/a"));
  ASSERT_TRUE(again) << describe(again.error());
  EXPECT_EQ(*again, csi_action::done);
}

TEST(csi_rules, staged_as_stages_again_with_the_fs_type_of_the_stage) {
  auto rec = block_volume();
  auto req = stage_at("/stage/pvc-1", {"noatime"});
  req.fs_type = "xfs"; // the volume's parameter says ext4
  set_staged(rec, req, "/dev/loop3");
  EXPECT_EQ(rec.stage_fs_type, "xfs");
  auto again = staged_as(rec);
  EXPECT_EQ(again.fs_type, "xfs");
  EXPECT_EQ(again.staging_path, "/stage/pvc-1");
  EXPECT_EQ(again.flags, (std::vector<std::string>{"noatime"}));
  set_unstaged(rec);
  EXPECT_TRUE(rec.stage_fs_type.empty());
}

TEST(csi_rules, stage_with_another_fs_type_than_the_recorded_already_exists) {
  auto rec = block_volume();
  auto req = stage_at("/stage/pvc-1");
  req.fs_type = "xfs";
  set_staged(rec, req, "/dev/loop3");
  auto same = check_stage(rec, req);
  ASSERT_TRUE(same) << describe(same.error());
  EXPECT_EQ(*same, csi_action::done);
  req.fs_type = "ext4";
  expect_error(check_stage(rec, req), ec::already_exists, "xfs");
}

TEST(csi_rules, publish_at_the_same_target_another_way_already_exists) {
  auto rec = staged_volume();
  rec.published["/pods/a"] = csi_publish("/pods/a").how;
  expect_error(check_publish(rec, csi_publish("/pods/a", true)), ec::already_exists,
               "not mount ro");
  auto flagged = csi_publish("/pods/a");
  flagged.how.flags = {"nosuid"};
  expect_error(check_publish(rec, flagged), ec::already_exists, "nosuid");
}

// SINGLE_NODE_SINGLE_WRITER (ReadWriteOncePod): one target at a time, whichever of the two
// publications asks it (CSI v1.12, NodePublishVolume, the table for plugins with the
// SINGLE_NODE_MULTI_WRITER capability: T1!=T2 is FAILED_PRECONDITION).
TEST(csi_rules, a_single_writer_publication_holds_the_only_target) {
  auto single = [](const std::string& target, bool readonly = false) {
    auto req = csi_publish(target, readonly);
    req.how.single_writer = true;
    return req;
  };
  auto rec = staged_volume();
  auto first = check_publish(rec, single("/pods/a"));
  ASSERT_TRUE(first) << describe(first.error());
  EXPECT_EQ(*first, csi_action::run);
  rec.published["/pods/a"] = single("/pods/a").how;
  auto again = check_publish(rec, single("/pods/a"));
  ASSERT_TRUE(again) << describe(again.error());
  EXPECT_EQ(*again, csi_action::done) << "a re-publish at the same target stays idempotent";
  expect_error(check_publish(rec, single("/pods/b")), ec::failed_precondition,
               "is published at /pods/a for a single writer");
  expect_error(check_publish(rec, csi_publish("/pods/b")), ec::failed_precondition, "/pods/a");
  expect_error(check_publish(rec, single("/pods/b", true)), ec::failed_precondition, "/pods/a");
  expect_error(check_publish(rec, csi_publish("/pods/a")), ec::already_exists,
               "as mount rw for a single writer, not mount rw");

  auto shared = staged_volume();
  shared.published["/pods/a"] = csi_publish("/pods/a").how;
  expect_error(check_publish(shared, single("/pods/b")), ec::failed_precondition,
               "SINGLE_NODE_SINGLE_WRITER allows one target: volume");
}

TEST(csi_rules, unpublish_runs_for_a_published_target_and_sweeps_an_unrecorded_one) {
  auto rec = staged_volume();
  rec.published["/pods/a"] = publication{};
  EXPECT_EQ(check_unpublish(rec, "/pods/a"), csi_action::run);
  // A publish that landed after its caller gave up may have left a mount the record lacks.
  EXPECT_EQ(check_unpublish(rec, "/pods/b"), csi_action::sweep);
  EXPECT_EQ(check_unpublish(block_volume(), "/pods/a"), csi_action::sweep);
  auto snapshot = block_volume();
  snapshot.kind = record_kind::snapshot;
  EXPECT_EQ(check_unpublish(snapshot, "/pods/a"), csi_action::done) << "never published";
}

// -- paths ----------------------------------------------------------------------

TEST(csi_rules, a_volume_path_is_the_staging_path_or_a_published_target) {
  auto rec = staged_volume();
  rec.published["/pods/a"] = publication{};
  EXPECT_FALSE(check_volume_path(rec, "/stage/pvc-1"));
  EXPECT_FALSE(check_volume_path(rec, "/pods/a"));
  expect_error(check_volume_path(rec, "/pods/b"), ec::not_found, "/pods/b");
  expect_error(check_volume_path(rec, ""), ec::not_found, "pvc-1");
  // An unstaged volume's empty staging path must not match an empty request.
  expect_error(check_volume_path(block_volume(), ""), ec::not_found, "pvc-1");
}
