// The volume actor's CSI publish and unpublish (actors/volume_csi.cpp) against the fakes
// of tests/actors/fakes.hpp. One transition at a time, and calls that land after their
// timeout, are in volume_csi_driver_test.cpp.

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
