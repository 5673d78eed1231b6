// The volume actor's CSI publish and unpublish (actors/volume_csi.cpp), one transition
// at a time, and calls that land after their timeout, against the fakes of
// tests/actors/fakes.hpp.

#include "tests/actors/volume_csi_fixture.hpp"

using namespace berth;
using namespace berth::test;
using namespace std::chrono_literals;

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
  auto err = test::call<atom::ok>(self, vol, atom::remove_v, record_owner::csi,
                                    record_kind::volume);
  ASSERT_TRUE(err);
  EXPECT_EQ(err.code(), code_of(ec::in_use)) << describe(err);
  ASSERT_FALSE(publish("/pods/a"));
  err = test::call<atom::ok>(self, vol, atom::remove_v, record_owner::csi,
                                    record_kind::volume);
  ASSERT_TRUE(err);
  EXPECT_EQ(err.code(), code_of(ec::in_use)) << describe(err);
  EXPECT_EQ(storage->removes, 0);
  ASSERT_FALSE(unpublish("/pods/a"));
  ASSERT_FALSE(unstage());
  EXPECT_FALSE(test::call<atom::ok>(self, vol, atom::remove_v, record_owner::csi,
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
  // The volume reads its mailbox in order: the get is answered after the publish was
  // read and queued behind the stage that holds the volume.
  (void)get();
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
