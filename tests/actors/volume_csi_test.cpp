// The CSI transitions of the volume actor (actors/volume_csi.cpp) against the
// fake backend and persistence of tests/actors/fakes.hpp.

#include "actors/volume.hpp"

#include <thread>

#include <gtest/gtest.h>

#include "core/errors.hpp"
#include "core/limits.hpp"
#include "tests/actors/fakes.hpp"

using namespace berth;
using namespace std::chrono_literals;

namespace {

constexpr uint64_t mib = test::fake_backend::mib;

uint8_t code_of(ec x) {
  return static_cast<uint8_t>(x);
}

class volume_csi_test : public test::volume_fixture {
protected:
  /// Longer than any hang in these tests, which are about order, not timeouts.
  std::chrono::milliseconds backend_timeout = 3s;

  void SetUp() override {
    spawn_volume("pvc-1", backend_timeout);
  }

  static volume_spec spec(uint64_t required, uint64_t limit = 0) {
    volume_spec out;
    out.backend = "local";
    out.parameters = {{"fsType", "ext4"}};
    out.required_bytes = required;
    out.limit_bytes = limit;
    return out;
  }

  static stage_request stage_req(const std::string& path = "/stage/pvc-1") {
    stage_request req;
    req.staging_path = path;
    req.flags = {"noatime"};
    return req;
  }

  static publish_request publish_req(const std::string& target, bool readonly = false) {
    publish_request req;
    req.target = target;
    req.staging_path = "/stage/pvc-1";
    req.how.readonly = readonly;
    return req;
  }

  volume_record create(uint64_t required = 10 * mib) {
    auto rec = test::ask<volume_record>(self, vol, atom::create_v, spec(required));
    EXPECT_TRUE(rec) << describe(rec.error());
    return rec ? *rec : volume_record{};
  }

  caf::error stage(const std::string& path = "/stage/pvc-1") {
    return test::call<atom::ok>(self, vol, atom::stage_v, stage_req(path));
  }

  caf::error unstage(const std::string& path = "/stage/pvc-1") {
    return test::call<atom::ok>(self, vol, atom::unstage_v, path);
  }

  caf::error publish(const std::string& target, bool readonly = false) {
    return test::call<atom::ok>(self, vol, atom::publish_v, publish_req(target, readonly));
  }

  caf::error unpublish(const std::string& target) {
    return test::call<atom::ok>(self, vol, atom::unpublish_v, target);
  }
};

/// A backend timeout short enough to let calls outlive it.
class volume_csi_timeout_test : public volume_csi_test {
protected:
  volume_csi_timeout_test() {
    backend_timeout = 200ms;
  }
};

} // namespace

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

// -- publish / unpublish -------------------------------------------------------------------

TEST_F(volume_csi_test, publish_before_stage_is_a_failed_precondition) {
  create();
  auto err = publish("/pods/a");
  ASSERT_TRUE(err);
  EXPECT_EQ(err.code(), code_of(ec::failed_precondition)) << describe(err);
  EXPECT_EQ(storage->publishes, 0);
}

TEST_F(volume_csi_test, publish_and_unpublish_are_idempotent) {
  create();
  ASSERT_FALSE(stage());
  EXPECT_FALSE(publish("/pods/a"));
  EXPECT_FALSE(publish("/pods/a"));
  EXPECT_EQ(storage->publishes, 1);
  auto rec = get();
  ASSERT_EQ(rec.published.count("/pods/a"), 1u);
  EXPECT_FALSE(rec.published.at("/pods/a").readonly);
  EXPECT_EQ(on_disk(), rec);
  auto err = publish("/pods/a", true);
  ASSERT_TRUE(err);
  EXPECT_EQ(err.code(), code_of(ec::already_exists)) << describe(err);
  EXPECT_FALSE(unpublish("/pods/a"));
  auto writes = disk->writes.load();
  EXPECT_FALSE(unpublish("/pods/a"));
  EXPECT_EQ(storage->unpublishes, 2)
    << "a target the record lacks still goes to the backend, which takes only this volume's "
       "leftover bind there (a crash between a publish and its commit)";
  EXPECT_EQ(disk->writes, writes) << "the second unpublish changes no record";
  EXPECT_TRUE(get().published.empty());
  EXPECT_TRUE(storage->targets().empty());
}

TEST_F(volume_csi_test, publish_beyond_max_targets_is_refused_and_changes_nothing) {
  create();
  ASSERT_FALSE(stage());
  for (size_t i = 0; i < limits::max_targets; ++i) {
    ASSERT_FALSE(publish("/pods/" + std::to_string(i))) << "target " << i;
  }
  auto before = get();
  ASSERT_EQ(before.published.size(), limits::max_targets);
  int calls = storage->publishes;
  auto err = publish("/pods/over");
  ASSERT_TRUE(err);
  EXPECT_EQ(err.code(), code_of(ec::resource_exhausted)) << describe(err);
  EXPECT_NE(describe(err).find("/pods/over"), std::string::npos) << describe(err);
  EXPECT_EQ(storage->publishes, calls) << "refused before the backend";
  EXPECT_EQ(get(), before);
  EXPECT_EQ(on_disk(), before);
  EXPECT_FALSE(publish("/pods/0")) << "a target already published is still fine";
  ASSERT_FALSE(unpublish("/pods/0"));
  EXPECT_FALSE(publish("/pods/over")) << "a freed target makes room";
}

TEST_F(volume_csi_test, unstage_while_published_is_a_failed_precondition) {
  create();
  ASSERT_FALSE(stage());
  ASSERT_FALSE(publish("/pods/a"));
  auto err = unstage();
  ASSERT_TRUE(err);
  EXPECT_EQ(err.code(), code_of(ec::failed_precondition)) << describe(err);
  EXPECT_EQ(storage->unstages, 0);
  EXPECT_FALSE(unpublish("/pods/a"));
  EXPECT_FALSE(unstage());
  EXPECT_EQ(storage->unstages, 1);
}

TEST_F(volume_csi_test, remove_while_staged_or_published_is_in_use) {
  create();
  ASSERT_FALSE(stage());
  auto err = test::call<atom::ok>(self, vol, atom::remove_v, std::string{owner_csi},
                                    record_kind::volume);
  ASSERT_TRUE(err);
  EXPECT_EQ(err.code(), code_of(ec::in_use)) << describe(err);
  ASSERT_FALSE(publish("/pods/a"));
  err = test::call<atom::ok>(self, vol, atom::remove_v, std::string{owner_csi},
                                    record_kind::volume);
  ASSERT_TRUE(err);
  EXPECT_EQ(err.code(), code_of(ec::in_use)) << describe(err);
  EXPECT_EQ(storage->removes, 0);
  ASSERT_FALSE(unpublish("/pods/a"));
  ASSERT_FALSE(unstage());
  EXPECT_FALSE(test::call<atom::ok>(self, vol, atom::remove_v, std::string{owner_csi},
                                    record_kind::volume));
  EXPECT_EQ(storage->removes, 1);
}

TEST_F(volume_csi_test, publish_records_that_it_created_the_target) {
  create();
  ASSERT_FALSE(stage());
  ASSERT_FALSE(publish("/pods/a"));
  EXPECT_TRUE(get().published.at("/pods/a").created);
  EXPECT_TRUE(on_disk().published.at("/pods/a").created)
    << "durable: unpublish deletes only a target the record says berth made";
}

TEST_F(volume_csi_test, unpublish_of_a_target_the_record_lacks_cleans_only_this_volumes_bind) {
  create();
  ASSERT_FALSE(stage());
  // A crash between a publish and its commit: the host has the bind, the record not.
  ASSERT_TRUE(storage->publish(get(), "/pods/left", publication{}));
  storage->make_foreign("/pods/foreign");
  EXPECT_FALSE(unpublish("/pods/left"));
  EXPECT_FALSE(unpublish("/pods/foreign"));
  EXPECT_EQ(storage->targets(), std::set<std::string>{"/pods/foreign"})
    << "this volume's leftover bind is gone, the foreign mount stays";
  EXPECT_TRUE(get().published.empty());
}

TEST_F(volume_csi_test, a_failed_persist_after_publish_unpublishes_again) {
  create();
  ASSERT_FALSE(stage());
  disk->fail = true;
  auto err = publish("/pods/a");
  ASSERT_TRUE(err);
  EXPECT_EQ(err.code(), code_of(ec::persist_failure));
  EXPECT_EQ(storage->publishes, 1);
  EXPECT_EQ(storage->unpublishes, 1) << "the publish is undone before the error leaves";
  EXPECT_TRUE(storage->targets().empty());
  disk->fail = false;
  EXPECT_TRUE(get().published.empty());
  EXPECT_FALSE(publish("/pods/a")) << "a retry publishes for real";
  EXPECT_EQ(storage->publishes, 2);
}

TEST_F(volume_csi_test, a_failed_persist_after_unpublish_publishes_again) {
  create();
  ASSERT_FALSE(stage());
  ASSERT_FALSE(publish("/pods/a"));
  disk->fail = true;
  auto err = unpublish("/pods/a");
  ASSERT_TRUE(err);
  EXPECT_EQ(err.code(), code_of(ec::persist_failure));
  EXPECT_EQ(storage->publishes, 2) << "the unpublish is undone";
  EXPECT_EQ(storage->targets(), std::set<std::string>{"/pods/a"});
  disk->fail = false;
  EXPECT_EQ(get().published.count("/pods/a"), 1u);
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

// -- one at a time ----------------------------------------------------------------------------

TEST_F(volume_csi_test, a_publish_waits_for_a_hanging_stage_and_then_succeeds) {
  create();
  storage->hang_stage = true;
  caf::scoped_actor stager{*ts.sys};
  caf::scoped_actor publisher{*ts.sys};
  auto staged = stager->request(vol, 5s, atom::stage_v, stage_req());
  for (int i = 0; i < 200 && storage->stages == 0; ++i) {
    std::this_thread::sleep_for(5ms);
  }
  ASSERT_EQ(storage->stages, 1) << "the stage is running";
  auto published = publisher->request(vol, 5s, atom::publish_v, publish_req("/pods/a"));
  std::this_thread::sleep_for(200ms);
  EXPECT_EQ(storage->publishes, 0) << "the publish must wait for the stage in progress";
  storage->release();
  caf::error stage_err;
  staged.receive([](atom::ok) {}, [&](caf::error& err) { stage_err = err; });
  EXPECT_FALSE(stage_err) << describe(stage_err);
  caf::error publish_err;
  published.receive([](atom::ok) {}, [&](caf::error& err) { publish_err = err; });
  EXPECT_FALSE(publish_err) << "the publish ran after the stage: " << describe(publish_err);
  EXPECT_EQ(storage->publishes, 1);
  EXPECT_EQ(get().published.count("/pods/a"), 1u);
}

// -- a call that lands after its timeout ----------------------------------------------------

TEST_F(volume_csi_timeout_test, a_stage_that_lands_after_its_timeout_is_undone) {
  create();
  storage->hang_stage = true;
  auto err = stage();
  ASSERT_TRUE(err) << "the stage must time out";
  EXPECT_EQ(err.code(), code_of(ec::timeout)) << describe(err);
  storage->release(); // the stage now succeeds, after its caller was told it failed
  EXPECT_TRUE(eventually([&] { return storage->sweeps == 1; }))
    << "a staging the record lacks must be undone";
  EXPECT_EQ(storage->attached(), "") << "and its device detached: no staging uses it";
  EXPECT_TRUE(storage->staged_paths().empty());
  EXPECT_TRUE(get().staging_path.empty());
}

TEST_F(volume_csi_timeout_test, a_retry_while_a_stage_hangs_starts_no_second_stage) {
  create();
  storage->hang_stage = true;
  ASSERT_TRUE(stage()) << "the first stage must time out";
  // A hung call blocks only its own volume (docs/design.md): the retry must not start a
  // second call while the first hangs.
  auto retry = stage();
  ASSERT_TRUE(retry) << "a retry while the first stage hangs must not succeed";
  EXPECT_EQ(retry.code(), code_of(ec::aborted)) << describe(retry);
  EXPECT_NE(describe(retry).find("stage started at"), std::string::npos) << describe(retry);
  EXPECT_EQ(storage->stages, 1) << "one stage call, ever, while it hangs";
  storage->release(); // the first stage lands late and is undone: the record lacks it
  EXPECT_TRUE(eventually([&] { return storage->sweeps == 1; }))
    << "undone by a sweep with the record as it is then (it keeps a device that "
       "a recorded staging uses)";
  EXPECT_FALSE(stage()) << "once the late call settled, the retry stages";
  EXPECT_EQ(get().staging_path, "/stage/pvc-1");
  EXPECT_EQ(storage->max_in_flight, 1);
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
  auto err = test::call<atom::ok>(self, vol, atom::create_v, option_map{});
  ASSERT_TRUE(err) << "Docker must not adopt a CSI snapshot as its volume";
  EXPECT_EQ(err.code(), code_of(ec::already_exists)) << describe(err);
}
