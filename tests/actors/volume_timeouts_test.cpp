// The volume actor when a call does not end in time (docs/design.md, "A hung call blocks
// only its own volume"): a mount that lands after its timeout is undone, a hung call
// admits no second one, a remove that timed out keeps the volume; and callers that give
// up ("Clients that give up") have their requests not started.

#include "actors/volume.hpp"

#include <mutex>
#include <thread>

#include <gtest/gtest.h>

#include "core/errors.hpp"
#include "tests/actors/fakes.hpp"
#include "tests/actors/volume_test_fixture.hpp"
#include "tests/support/latch.hpp"

using namespace berth;
using namespace std::chrono_literals;
using test::code;
using test::volume_test;

TEST_F(volume_test, a_mount_that_lands_after_its_timeout_is_undone) {
  create();
  storage->hang_mount = true;
  auto err = test::call<std::string>(self, vol, atom::mount_v,
                                     std::string{"c1"}, std::string{}, caller{});
  ASSERT_TRUE(err) << "the mount must time out";
  EXPECT_EQ(code(err), static_cast<uint8_t>(ec::timeout)) << describe(err);
  storage->release(); // the mount now lands, after its caller was told it failed
  // Wait for the undo itself: before the late mount lands, host_mounted is false too.
  ASSERT_TRUE(eventually([&] { return storage->unmounts == 1; }))
    << "a mount the record lacks must be undone";
  EXPECT_FALSE(storage->host_mounted);
  EXPECT_FALSE(get().mounted);
}

// -- a hung call (docs/design.md, "A hung call blocks only its own volume") -----------

TEST_F(volume_test, a_retry_on_a_hung_volume_fails_fast_and_starts_no_second_call) {
  create();
  storage->hang_mount = true;
  auto err = test::call<std::string>(self, vol, atom::mount_v,
                                     std::string{"c1"}, std::string{}, caller{});
  ASSERT_TRUE(err) << "the mount must time out";
  EXPECT_EQ(code(err), static_cast<uint8_t>(ec::timeout)) << describe(err);
  auto start = std::chrono::steady_clock::now();
  auto retry = test::call<std::string>(self, vol, atom::mount_v,
                                       std::string{"c1"}, std::string{}, caller{});
  auto took = std::chrono::steady_clock::now() - start;
  ASSERT_TRUE(retry) << "a retry while the first mount hangs must not succeed";
  EXPECT_EQ(code(retry), static_cast<uint8_t>(ec::aborted)) << describe(retry);
  EXPECT_NE(describe(retry).find("mount started at"), std::string::npos) << describe(retry);
  EXPECT_LT(took, 200ms) << "the retry must fail fast, not wait for a timeout";
  EXPECT_EQ(storage->mounts, 1) << "no second call while the first has not returned";
  EXPECT_TRUE(test::call<atom::ok>(self, vol, atom::remove_v, record_owner::docker,
                                    record_kind::volume)) << "nor a remove";
  EXPECT_TRUE(test::call<atom::ok>(self, vol, atom::create_v, option_map{}, uint64_t{0})) << "nor a create";
  storage->release();
  ASSERT_TRUE(eventually([&] { return storage->unmounts == 1; })) << "the late mount is undone";
  EXPECT_FALSE(test::call<std::string>(self, vol, atom::mount_v,
                                       std::string{"c1"}, std::string{}, caller{}))
    << "once the call returned the volume serves again";
  EXPECT_EQ(storage->max_in_flight, 1);
}

TEST_F(volume_test, a_timed_out_remove_keeps_the_volume_until_its_storage_is_gone) {
  create();
  storage->hang_remove = true;
  auto err = test::call<atom::ok>(self, vol, atom::remove_v, record_owner::docker,
                                    record_kind::volume);
  ASSERT_TRUE(err) << "the remove must time out";
  EXPECT_EQ(code(err), static_cast<uint8_t>(ec::timeout)) << describe(err);
  EXPECT_FALSE(test::call<volume_record>(self, vol, atom::get_v)) << "the volume stays";
  {
    std::lock_guard<std::mutex> guard{disk->mtx};
    EXPECT_EQ(disk->records.count("v1"), 1u) << "its record stays while the deletion runs";
  }
  auto again = test::call<atom::ok>(self, vol, atom::create_v, option_map{}, uint64_t{0});
  ASSERT_TRUE(again) << "a re-create must not be told the half-deleted volume exists";
  EXPECT_EQ(code(again), static_cast<uint8_t>(ec::aborted)) << describe(again);
  storage->release(); // the deletion finishes: the removal is adopted
  ASSERT_TRUE(eventually([&] {
    std::lock_guard<std::mutex> guard{disk->mtx};
    return disk->records.count("v1") == 0;
  })) << "the late deletion is adopted: the record goes";
  EXPECT_TRUE(test::call<volume_record>(self, vol, atom::get_v)) << "the volume is gone";
  EXPECT_FALSE(test::call<atom::ok>(self, vol, atom::create_v, option_map{}, uint64_t{0}))
    << "a re-create now makes a new volume";
  EXPECT_EQ(storage->creates, 2);
}

TEST_F(volume_test, a_failed_remove_keeps_the_volume_and_its_record) {
  create();
  storage->fail_remove = true;
  EXPECT_TRUE(test::call<atom::ok>(self, vol, atom::remove_v, record_owner::docker,
                                    record_kind::volume));
  EXPECT_FALSE(test::call<volume_record>(self, vol, atom::get_v)) << "the volume stays";
  std::lock_guard<std::mutex> guard{disk->mtx};
  EXPECT_EQ(disk->records.count("v1"), 1u);
}

// -- abandoned callers (docs/design.md, "Clients that give up") ---------------------------

TEST_F(volume_test, a_mount_whose_caller_left_before_its_turn_is_not_started) {
  create();
  storage->hang_mount = true;
  // c1's mount holds the volume; c2's waits behind it, and its client leaves meanwhile.
  std::thread first([&] {
    caf::scoped_actor client{*ts.sys};
    (void)test::call<std::string>(client, vol, atom::mount_v,
                                  std::string{"c1"}, std::string{}, caller{});
  });
  ASSERT_TRUE(eventually([&] { return storage->mounts == 1; }));
  auto from = caller::tracked();
  caf::error second;
  test::latch sent{1};
  std::thread waiting([&] {
    caf::scoped_actor client{*ts.sys};
    auto reply = client->request(vol, 5s, atom::mount_v, std::string{"c2"}, std::string{},
                                 from);
    sent.count_down();
    reply.receive([](std::string&) {}, [&](caf::error& err) { second = err; });
  });
  sent.wait();
  (void)get(); // answered after c2's Mount was read: c2 waits in the queue
  from.leave("connection closed");
  storage->release();
  first.join();
  waiting.join();
  ASSERT_TRUE(second) << "a mount whose caller left must not be counted";
  EXPECT_EQ(code(second), static_cast<uint8_t>(ec::aborted)) << describe(second);
  EXPECT_NE(describe(second).find("caller went away"), std::string::npos) << describe(second);
  auto rec = get();
  EXPECT_EQ(rec.mounts.count("c2"), 0u) << "nobody would ever Unmount c2";
  EXPECT_EQ(rec.mounts.at("c1"), 1u);
}

TEST_F(volume_test, a_mount_past_its_callers_deadline_is_not_started) {
  create();
  auto from = caller::tracked(caller::clock::now() - 1ms);
  auto err = test::call<std::string>(self, vol, atom::mount_v,
                                     std::string{"c1"}, std::string{}, from);
  ASSERT_TRUE(err);
  EXPECT_EQ(code(err), static_cast<uint8_t>(ec::aborted)) << describe(err);
  EXPECT_EQ(storage->mounts, 0);
  EXPECT_TRUE(get().mounts.empty());
}
