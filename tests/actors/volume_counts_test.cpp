// Docker Mounts and Unmounts that share a turn (actors/volume_counts.cpp), driven by the
// test (tests/actors/driver_fixture.hpp): the ones waiting behind a running Mount or
// Unmount, each changing only counts, are one saved record, and each caller gets its own
// answer. One that needs the host (the first Mount, the last Unmount) keeps its own turn.

#include <gtest/gtest.h>

#include "tests/actors/driver_fixture.hpp"

using namespace berth;
using namespace std::chrono_literals;

namespace {

class volume_counts_test : public test::volume_driver_fixture {
protected:
  using mount_handle = decltype(std::declval<caf::scoped_actor&>()->request(
    std::declval<volume_actor&>(), caf::infinite, atom::mount_v, std::string{}, std::string{},
    caller{}));
  using unmount_handle = decltype(std::declval<caf::scoped_actor&>()->request(
    std::declval<volume_actor&>(), caf::infinite, atom::unmount_v, std::string{}));

  std::string mountpoint; ///< where the fake backend mounts v1

  void SetUp() override {
    spawn_created();
    mountpoint = storage->mountpoint(record());
  }

  /// Sends a Mount or an Unmount and runs nothing yet: those sent together reach the
  /// volume's mailbox together, as a burst from many clients does.
  mount_handle send_mount(const std::string& id, caller from = {}) {
    return self->request(vol, caf::infinite, atom::mount_v, id, std::string{"dockerd-1"}, from);
  }
  unmount_handle send_unmount(const std::string& id) {
    return self->request(vol, caf::infinite, atom::unmount_v, id);
  }

  void expect_mounted_at_the_mountpoint(mount_handle& h) {
    auto got = answer_of<std::string>(h);
    ASSERT_TRUE(got.given);
    EXPECT_FALSE(got.err) << describe(got.err);
    EXPECT_EQ(got.value, mountpoint); // read without record(), which runs waiting calls
  }
  void expect_ok(unmount_handle& h) {
    auto got = answer_of<atom::ok>(h);
    ASSERT_TRUE(got.given);
    EXPECT_FALSE(got.err) << describe(got.err);
  }
};

} // namespace

TEST_F(volume_counts_test, counted_mounts_and_unmounts_behind_one_share_one_saved_record) {
  ASSERT_FALSE(mount("c0").err); // the host mount
  int writes = disk->writes;
  auto c1 = send_mount("c1"); // starts at once, alone
  auto c2 = send_mount("c2"); // these wait behind it, and share the next turn
  auto c2_again = send_mount("c2");
  auto c0_gone = send_unmount("c0");
  auto c1_gone = send_unmount("c1");
  sched.run();
  expect_mounted_at_the_mountpoint(c1);
  expect_mounted_at_the_mountpoint(c2);
  expect_mounted_at_the_mountpoint(c2_again);
  expect_ok(c0_gone);
  expect_ok(c1_gone);
  EXPECT_EQ(disk->writes, writes + 2) << "c1 alone, then the other four in one record";
  EXPECT_EQ(record().mounts, (std::map<std::string, uint32_t>{{"c2", 2}}));
  EXPECT_EQ(test::record_on(*disk, "v1").mounts, record().mounts) << "durable";
  EXPECT_EQ(storage->mounts, 1) << "no host work for counts";
  EXPECT_EQ(storage->unmounts, 0);
}

TEST_F(volume_counts_test, the_last_unmount_and_what_follows_it_keep_their_own_turns) {
  auto c1 = start(atom::mount_v, std::string{"c1"}, std::string{}, caller{});
  ASSERT_TRUE(runner->start_next()) << "c1's host mount runs, and holds the volume";
  auto c2 = send_mount("c2");
  auto c1_gone = send_unmount("c1"); // c2 is still counted: counts only, joins
  auto c2_gone = send_unmount("c2"); // the last: unmounts the host, in a turn of its own
  auto c3 = send_mount("c3");        // behind it: mounts the host again, in order
  sched.run();
  int writes = disk->writes;
  return_held();
  expect_mounted_at_the_mountpoint(c1);
  expect_mounted_at_the_mountpoint(c2);
  expect_ok(c1_gone);
  EXPECT_EQ(disk->writes, writes + 2) << "c1, then c2 and c1's Unmount in one record";
  EXPECT_EQ(runner->waiting(), 1U) << "the last Unmount's host unmount";
  run_call();
  expect_ok(c2_gone);
  EXPECT_EQ(storage->unmounts, 1);
  EXPECT_EQ(runner->waiting(), 1U) << "then c3's host mount, not before";
  run_call();
  expect_mounted_at_the_mountpoint(c3);
  EXPECT_EQ(storage->mounts, 2);
  EXPECT_EQ(record().mounts, (std::map<std::string, uint32_t>{{"c3", 1}}));
  EXPECT_TRUE(record().mounted);
}

TEST_F(volume_counts_test, a_shared_turn_whose_record_cannot_be_saved_fails_each_change) {
  ASSERT_FALSE(mount("c0").err);
  auto before = record();
  disk->fail = true;
  auto c1 = send_mount("c1");
  auto c2 = send_mount("c2");
  auto c0_gone = send_unmount("c0");
  sched.run();
  EXPECT_TRUE(answer_of<std::string>(c1).err);
  EXPECT_TRUE(answer_of<std::string>(c2).err) << "not counted, so not acknowledged";
  EXPECT_TRUE(answer_of<atom::ok>(c0_gone).err);
  disk->fail = false;
  EXPECT_EQ(record(), before) << "nothing committed";
  EXPECT_EQ(test::record_on(*disk, "v1").mounts, before.mounts);
}

TEST_F(volume_counts_test, a_mount_whose_caller_left_joins_refused_and_is_not_counted) {
  ASSERT_FALSE(mount("c0").err);
  auto c1 = send_mount("c1");
  auto from = caller::tracked();
  auto c2 = send_mount("c2", from);
  from.leave("connection closed");
  auto c3 = send_mount("c3");
  auto unknown = send_unmount("never-mounted");
  sched.run();
  expect_mounted_at_the_mountpoint(c1);
  auto refused = answer_of<std::string>(c2);
  ASSERT_TRUE(refused.given);
  EXPECT_TRUE(is(refused.err, ec::aborted)) << describe(refused.err);
  expect_mounted_at_the_mountpoint(c3);
  expect_ok(unknown);
  EXPECT_EQ(record().mounts, (std::map<std::string, uint32_t>{{"c0", 1}, {"c1", 1}, {"c3", 1}}));
}
