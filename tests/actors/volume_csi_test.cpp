// The CSI transitions of the volume actor (actors/volume_csi.cpp) against the
// fake backend and persistence of tests/actors/fakes.hpp: create, stage and unstage,
// grow and stats. Publish, unpublish and timing: volume_csi_publish_test.cpp.

#include "tests/actors/volume_csi_fixture.hpp"

using namespace berth;
using namespace berth::test;
using namespace std::chrono_literals;

// -- create ------------------------------------------------------------------------------

TEST_F(volume_csi_test, create_returns_the_record_with_the_rounded_capacity) {
  auto rec = create(10 * mib + 1);
  EXPECT_EQ(rec.name, "pvc-1");
  EXPECT_EQ(rec.kind, record_kind::volume);
  EXPECT_EQ(rec.backend, "local");
  EXPECT_EQ(rec.capacity_bytes, 11 * mib) << "rounded up to the backend's 1 MiB unit";
  EXPECT_EQ(rec.options.at("fsType"), "ext4");
  EXPECT_EQ(storage->creates, 1);
  EXPECT_EQ(on_disk(), rec) << "durable before the reply";
  EXPECT_EQ(get(), rec);
}

TEST_F(volume_csi_test, create_without_a_size_gets_the_backends_minimum) {
  EXPECT_EQ(create(0).capacity_bytes, test::fake_backend::min_bytes);
}

TEST_F(volume_csi_test, create_outside_what_the_backend_can_round_to_is_refused) {
  auto err = test::call<volume_record>(self, vol, atom::create_v, spec(10 * mib + 1, 10 * mib + 2));
  ASSERT_TRUE(err);
  EXPECT_EQ(err.code(), code_of(ec::out_of_range)) << describe(err);
  EXPECT_EQ(storage->creates, 0);
  EXPECT_TRUE(test::call<volume_record>(self, vol, atom::get_v)) << "nothing was created";
}

TEST_F(volume_csi_test, create_twice_returns_the_same_record_once_created) {
  auto first = create(10 * mib + 1);
  auto again = test::ask<volume_record>(self, vol, atom::create_v, spec(10 * mib + 1));
  ASSERT_TRUE(again) << describe(again.error());
  EXPECT_EQ(*again, first);
  EXPECT_EQ(storage->creates, 1);
  EXPECT_EQ(disk->writes, 1);
}

TEST_F(volume_csi_test, an_incompatible_recreate_already_exists) {
  create(10 * mib);
  auto other = spec(10 * mib);
  other.parameters["fsType"] = "xfs";
  auto err = test::call<volume_record>(self, vol, atom::create_v, other);
  ASSERT_TRUE(err);
  EXPECT_EQ(err.code(), code_of(ec::already_exists)) << describe(err);
  err = test::call<volume_record>(self, vol, atom::create_v, spec(20 * mib));
  ASSERT_TRUE(err);
  EXPECT_EQ(err.code(), code_of(ec::already_exists)) << describe(err);
  EXPECT_EQ(storage->creates, 1);
}

TEST_F(volume_csi_test, a_failed_persist_of_create_removes_the_storage) {
  disk->fail = true;
  auto err = test::call<volume_record>(self, vol, atom::create_v, spec(10 * mib));
  ASSERT_TRUE(err);
  EXPECT_EQ(err.code(), code_of(ec::persist_failure));
  EXPECT_EQ(storage->removes, 1);
  disk->fail = false;
  EXPECT_TRUE(test::call<volume_record>(self, vol, atom::get_v));
}

// -- stage / unstage -----------------------------------------------------------------------

TEST_F(volume_csi_test, stage_records_the_staging_and_the_device) {
  create();
  EXPECT_FALSE(stage());
  auto rec = get();
  EXPECT_EQ(rec.staging_path, "/stage/pvc-1");
  EXPECT_EQ(rec.device, "/dev/loop1");
  EXPECT_EQ(rec.stage_flags, std::vector<std::string>{"noatime"});
  EXPECT_FALSE(rec.staged_block);
  EXPECT_EQ(on_disk(), rec);
  EXPECT_EQ(storage->staged_paths(), std::set<std::string>{"/stage/pvc-1"});
}

TEST_F(volume_csi_test, stage_twice_calls_the_backend_once) {
  create();
  EXPECT_FALSE(stage());
  auto writes = disk->writes.load();
  EXPECT_FALSE(stage());
  EXPECT_EQ(storage->stages, 1);
  EXPECT_EQ(disk->writes, writes) << "an idempotent stage changes nothing";
  auto err = stage("/stage/elsewhere");
  ASSERT_TRUE(err);
  EXPECT_EQ(err.code(), code_of(ec::failed_precondition)) << describe(err);
  EXPECT_EQ(storage->stages, 1);
}

TEST_F(volume_csi_test, stage_of_a_volume_that_does_not_exist_is_not_found) {
  auto err = stage();
  ASSERT_TRUE(err);
  EXPECT_EQ(err.code(), code_of(ec::not_found));
  EXPECT_EQ(storage->stages, 0);
}

TEST_F(volume_csi_test, a_failed_backend_stage_reaches_the_caller_and_saves_nothing) {
  create();
  storage->fail_stage = true;
  auto writes = disk->writes.load();
  auto err = stage();
  ASSERT_TRUE(err);
  EXPECT_NE(describe(err).find("injected"), std::string::npos);
  EXPECT_EQ(disk->writes, writes);
  EXPECT_TRUE(get().staging_path.empty());
}

TEST_F(volume_csi_test, a_failed_persist_after_stage_unstages_again) {
  create();
  disk->fail = true;
  auto err = stage();
  ASSERT_TRUE(err);
  EXPECT_EQ(err.code(), code_of(ec::persist_failure)) << describe(err);
  EXPECT_EQ(storage->stages, 1);
  EXPECT_EQ(storage->unstages, 1) << "the stage is undone before the error leaves";
  EXPECT_TRUE(storage->staged_paths().empty());
  disk->fail = false;
  auto rec = get();
  EXPECT_TRUE(rec.staging_path.empty());
  EXPECT_TRUE(rec.device.empty());
  EXPECT_FALSE(stage()) << "a retry stages for real";
  EXPECT_EQ(storage->stages, 2);
}

TEST_F(volume_csi_test, unstage_clears_the_staging_and_is_idempotent) {
  create();
  ASSERT_FALSE(stage());
  EXPECT_FALSE(unstage());
  EXPECT_EQ(storage->unstages, 1);
  auto rec = get();
  EXPECT_TRUE(rec.staging_path.empty());
  EXPECT_TRUE(rec.device.empty());
  EXPECT_EQ(on_disk(), rec);
  EXPECT_FALSE(unstage()) << "not staged per the record: OK";
  EXPECT_EQ(storage->unstages, 1) << "a volume the record does not stage is not unstaged";
  EXPECT_EQ(storage->sweeps, 1)
    << "the backend only sweeps this volume's own leftovers at the path (a crash may leave them)";
  EXPECT_EQ(get(), rec) << "and the record does not change";
}

TEST_F(volume_csi_test, unstage_of_an_unstaged_volume_leaves_what_is_not_its_own) {
  create();
  storage->make_foreign("/stage/pvc-1");
  EXPECT_FALSE(unstage()) << "not staged there per the record: OK";
  EXPECT_EQ(storage->unstages, 0);
  EXPECT_EQ(storage->staged_paths(), std::set<std::string>{"/stage/pvc-1"})
    << "a mount that is not this volume's stays";
  EXPECT_TRUE(get().staging_path.empty());
}

TEST_F(volume_csi_test, stage_records_the_fs_type_it_was_asked_for) {
  create();
  auto req = stage_req();
  req.fs_type = "xfs";
  ASSERT_FALSE(test::call<atom::ok>(self, vol, atom::stage_v, req));
  EXPECT_EQ(get().stage_fs_type, "xfs");
  EXPECT_EQ(on_disk().stage_fs_type, "xfs") << "durable, so a re-stage at start can use it";
  req.fs_type = "ext4";
  auto err = test::call<atom::ok>(self, vol, atom::stage_v, req);
  ASSERT_TRUE(err) << "staged as xfs, asked ext4";
  EXPECT_EQ(err.code(), code_of(ec::already_exists)) << describe(err);
  EXPECT_FALSE(unstage());
  EXPECT_TRUE(get().stage_fs_type.empty());
}

TEST_F(volume_csi_test, unstage_cleans_a_staging_the_record_lacks) {
  create();
  // A crash between the stage and its commit: the host has it, the record not.
  stage_request req = stage_req();
  ASSERT_TRUE(storage->stage(get(), req));
  EXPECT_FALSE(unstage());
  EXPECT_TRUE(storage->staged_paths().empty()) << "the unrecorded staging is cleaned";
}

TEST_F(volume_csi_test, unstage_at_another_path_leaves_the_recorded_staging) {
  create();
  ASSERT_FALSE(stage());
  EXPECT_FALSE(unstage("/stage/elsewhere"));
  EXPECT_EQ(storage->unstages, 0) << "the volume is staged elsewhere: nothing to clean here";
  EXPECT_EQ(get().staging_path, "/stage/pvc-1");
}

TEST_F(volume_csi_test, a_failed_persist_after_unstage_stages_again) {
  create();
  ASSERT_FALSE(stage());
  disk->fail = true;
  auto err = unstage();
  ASSERT_TRUE(err);
  EXPECT_EQ(err.code(), code_of(ec::persist_failure));
  EXPECT_EQ(storage->unstages, 1);
  EXPECT_EQ(storage->stages, 2) << "the unstage is undone";
  EXPECT_EQ(storage->staged_paths(), std::set<std::string>{"/stage/pvc-1"});
  disk->fail = false;
  EXPECT_EQ(get().staging_path, "/stage/pvc-1");
}

// -- grow / stats (expand: volume_mailbox_test.cpp) ------------------------------------------------------------------

TEST_F(volume_csi_test, grow_and_stats_at_an_unknown_path_are_not_found) {
  create();
  ASSERT_FALSE(stage());
  auto err = test::call<uint64_t>(self, vol, atom::grow_v, std::string{"/nowhere"});
  ASSERT_TRUE(err);
  EXPECT_EQ(err.code(), code_of(ec::not_found)) << describe(err);
  err = test::call<volume_stats>(self, vol, atom::stats_v, std::string{"/nowhere"});
  ASSERT_TRUE(err);
  EXPECT_EQ(err.code(), code_of(ec::not_found)) << describe(err);
  EXPECT_NE(describe(err).find("/nowhere"), std::string::npos);
  EXPECT_EQ(storage->grows + storage->stats_calls, 0);
}

TEST_F(volume_csi_test, grow_returns_the_backends_size) {
  create(10 * mib);
  ASSERT_FALSE(stage());
  auto bytes = test::ask<uint64_t>(self, vol, atom::grow_v, std::string{"/stage/pvc-1"});
  ASSERT_TRUE(bytes) << describe(bytes.error());
  EXPECT_EQ(*bytes, 10 * mib);
  EXPECT_EQ(storage->grows, 1);
}

TEST_F(volume_csi_test, stats_returns_the_backends) {
  create(8 * mib);
  ASSERT_FALSE(stage());
  ASSERT_FALSE(publish("/pods/a"));
  for (auto path : {"/stage/pvc-1", "/pods/a"}) {
    auto stats = test::ask<volume_stats>(self, vol, atom::stats_v, std::string{path});
    ASSERT_TRUE(stats) << describe(stats.error());
    EXPECT_EQ(stats->total_bytes, 8 * mib);
    EXPECT_EQ(stats->used_bytes, 2 * mib);
    EXPECT_EQ(stats->available_bytes, 6 * mib);
    EXPECT_EQ(stats->total_inodes, 1000u);
    EXPECT_EQ(stats->used_inodes, 100u);
    EXPECT_EQ(stats->free_inodes, 900u);
    EXPECT_FALSE(stats->abnormal);
  }
  EXPECT_EQ(storage->stats_calls, 2);
  storage->fail_stats = true;
  auto err = test::call<volume_stats>(self, vol, atom::stats_v, std::string{"/pods/a"});
  ASSERT_TRUE(err);
  EXPECT_NE(describe(err).find("injected"), std::string::npos);
}

TEST_F(volume_csi_test, a_backend_that_cannot_copy_refuses_snapshots_and_sources) {
  storage->copies = false;
  auto snap = spec(0);
  snap.kind = record_kind::snapshot;
  snap.source = volume_source("pvc-0");
  snap.source_bytes = 10 * mib;
  auto err = test::call<volume_record>(self, vol, atom::create_v, snap);
  ASSERT_TRUE(err);
  EXPECT_EQ(err.code(), code_of(ec::unsupported)) << describe(err);
  auto clone = spec(10 * mib);
  clone.source = snapshot_source("s1");
  clone.source_bytes = 10 * mib;
  err = test::call<volume_record>(self, vol, atom::create_v, clone);
  ASSERT_TRUE(err);
  EXPECT_EQ(err.code(), code_of(ec::unsupported)) << describe(err);
  EXPECT_EQ(storage->creates, 0) << "nothing is made when it cannot be filled";
}

TEST_F(volume_csi_test, a_create_for_another_backend_than_the_actors_is_refused) {
  auto other = spec(10 * mib);
  other.backend = "block";
  auto err = test::call<volume_record>(self, vol, atom::create_v, other);
  ASSERT_TRUE(err);
  EXPECT_EQ(err.code(), code_of(ec::already_exists)) << describe(err);
  EXPECT_EQ(storage->creates, 0);
}

TEST_F(volume_csi_test, a_docker_create_on_a_csi_snapshot_name_is_refused) {
  auto snap = spec(0);
  snap.kind = record_kind::snapshot;
  snap.source = volume_source("pvc-0");
  snap.source_bytes = 10 * mib;
  ASSERT_TRUE(test::ask<volume_record>(self, vol, atom::create_v, snap));
  auto err = test::call<atom::ok>(self, vol, atom::create_v, option_map{}, uint64_t{0});
  ASSERT_TRUE(err) << "Docker must not adopt a CSI snapshot as its volume";
  EXPECT_EQ(err.code(), code_of(ec::already_exists)) << describe(err);
}
