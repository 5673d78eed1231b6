// The volume actor's backend calls and their deadlines, driven by the test
// (tests/actors/driver_fixture.hpp). Each interleaving of a call's report and its deadline
// is written down (docs/design.md, "A hung call blocks only its own volume", "Clients that
// give up"): a report after the deadline, a call dropped before it started, a retry beside a
// hung call, a timer that fires for an earlier call, a remove that lands late, callers that
// left, and Mounts that wait in the queue behind a host mount.

#include <gtest/gtest.h>

#include "tests/actors/driver_fixture.hpp"
#include "tests/support/captured_log.hpp"

using namespace berth;
using namespace std::chrono_literals;

namespace {

class volume_driver_test : public test::volume_driver_fixture {
protected:
  void SetUp() override { spawn_created(); }
};

} // namespace

TEST_F(volume_driver_test, a_mount_that_reports_after_its_deadline_times_out_and_is_undone) {
  auto h = start(atom::mount_v, std::string{"c1"}, std::string{}, caller{});
  ASSERT_TRUE(runner->start_next()) << "the mount runs, and does not return";
  advance(timeout - 1ms);
  EXPECT_FALSE(answer_of<std::string>(h).given) << "not before its deadline";
  advance(2ms);
  auto first = answer_of<std::string>(h);
  ASSERT_TRUE(first.given) << "the caller is answered at the deadline";
  EXPECT_TRUE(is(first.err, ec::timeout)) << describe(first.err);
  return_held(); // the mount lands, after its caller was told it failed
  EXPECT_EQ(runner->waiting(), 1U) << "the volume settles it in turn: an unmount";
  run_call();
  EXPECT_EQ(storage->unmounts, 1);
  EXPECT_FALSE(storage->host_mounted);
  EXPECT_FALSE(record().mounted);
  auto again = mount("c1");
  ASSERT_TRUE(again.given);
  EXPECT_FALSE(again.err) << "the volume is certain again: " << describe(again.err);
}

TEST_F(volume_driver_test, a_call_dropped_before_it_started_leaves_the_volume_certain) {
  auto h = start(atom::mount_v, std::string{"c1"}, std::string{}, caller{});
  advance(timeout + 1ms); // no worker took it
  auto first = answer_of<std::string>(h);
  ASSERT_TRUE(first.given);
  EXPECT_TRUE(is(first.err, ec::timeout)) << describe(first.err);
  EXPECT_NE(describe(first.err).find("did not start"), std::string::npos) << describe(first.err);
  EXPECT_EQ(runner->waiting(), 0U) << "the call was dropped";
  EXPECT_EQ(storage->mounts, 0);
  auto retry = mount("c1");
  ASSERT_TRUE(retry.given);
  EXPECT_FALSE(retry.err) << "nothing happened, so nothing is uncertain: " << describe(retry.err);
  EXPECT_EQ(storage->mounts, 1);
}

TEST_F(volume_driver_test, a_retry_beside_a_hung_call_is_refused_at_once_and_starts_nothing) {
  auto h = start(atom::mount_v, std::string{"c1"}, std::string{}, caller{});
  runner->start_next();
  advance(timeout + 1ms);
  ASSERT_TRUE(is(answer_of<std::string>(h).err, ec::timeout));
  auto r = start(atom::mount_v, std::string{"c1"}, std::string{}, caller{});
  auto retry = answer_of<std::string>(r);
  ASSERT_TRUE(retry.given) << "refused without moving the clock";
  EXPECT_TRUE(is(retry.err, ec::aborted)) << describe(retry.err);
  EXPECT_NE(describe(retry.err).find("mount started at"), std::string::npos) << describe(retry.err);
  EXPECT_EQ(runner->waiting(), 0U) << "no second call beside the hung one";
  auto rm = start(atom::remove_v, record_owner::docker, record_kind::volume);
  EXPECT_TRUE(is(answer_of<atom::ok>(rm).err, ec::aborted)) << "nor a remove";
  auto cr = start(atom::create_v, option_map{}, uint64_t{0});
  EXPECT_TRUE(is(answer_of<atom::ok>(cr).err, ec::aborted)) << "nor a create";
  EXPECT_EQ(runner->waiting(), 0U);
  return_held();
  EXPECT_EQ(storage->mounts, 1) << "one mount ran, not two";
  run_call(); // the late mount's undo
  EXPECT_FALSE(mount("c1").err) << "once it returned, the volume serves again";
}

TEST_F(volume_driver_test, retries_beside_a_hung_call_are_not_logged_as_failures) {
  test_support::captured_log log;
  auto h = start(atom::mount_v, std::string{"c1"}, std::string{}, caller{});
  runner->start_next();
  advance(timeout + 1ms);
  ASSERT_TRUE(is(answer_of<std::string>(h).err, ec::timeout));
  auto warned = log.count("[warning]");
  auto failed = log.count("[error]");
  // Clients retry a hung volume as fast as they are answered: the hang was logged once,
  // and a line per refusal would bury it.
  for (int i = 0; i < 3; ++i) {
    auto r = start(atom::mount_v, std::string{"c1"}, std::string{}, caller{});
    ASSERT_TRUE(is(answer_of<std::string>(r).err, ec::aborted));
  }
  EXPECT_EQ(log.count("[error]"), failed) << log.out.str();
  EXPECT_EQ(log.count("[warning]"), warned) << log.out.str();
  EXPECT_EQ(log.count("has not returned"), 3) << "each refusal at debug: " << log.out.str();
  return_held();
  run_call(); // the late mount's undo
}

TEST_F(volume_driver_test, a_timer_armed_for_an_earlier_call_is_armed_again_for_the_current_one) {
  ASSERT_FALSE(mount("c1").err); // the first call arms the timer at its deadline
  advance(timeout / 2);
  auto h = start(atom::unmount_v, std::string{"c1"}); // the second call begins halfway
  advance(timeout / 2 + 1ms); // the timer fires for the first call's deadline
  EXPECT_FALSE(answer_of<atom::ok>(h).given) << "the current call is not due yet";
  EXPECT_EQ(runner->waiting(), 1U) << "nor abandoned";
  advance(timeout / 2); // the current call's own deadline
  ASSERT_EQ(runner->waiting(), 1U);
  run_call();
  EXPECT_EQ(storage->unmounts, 0) << "the unmount timed out before it started";
  EXPECT_EQ(storage->lazy_unmounts, 1) << "and the lazy detach that stands in for it ran";
  auto done = answer_of<atom::ok>(h);
  ASSERT_TRUE(done.given);
  EXPECT_FALSE(done.err) << describe(done.err);
}

TEST_F(volume_driver_test, a_call_that_reports_in_time_is_answered_and_its_timer_does_nothing) {
  auto h = start(atom::mount_v, std::string{"c1"}, std::string{}, caller{});
  run_call();
  auto first = answer_of<std::string>(h);
  ASSERT_TRUE(first.given);
  EXPECT_FALSE(first.err) << describe(first.err);
  EXPECT_EQ(first.value, record().mountpoint);
  advance(timeout + 1ms);
  EXPECT_FALSE(self->has_next_message()) << "the timer found no call";
  EXPECT_EQ(runner->waiting(), 0U);
  EXPECT_TRUE(record().mounted);
}

TEST_F(volume_driver_test, a_timed_out_remove_keeps_the_volume_until_its_late_deletion_is_adopted) {
  auto h = start(atom::remove_v, record_owner::docker, record_kind::volume);
  runner->start_next();
  advance(timeout + 1ms);
  auto first = answer_of<atom::ok>(h);
  ASSERT_TRUE(first.given);
  EXPECT_TRUE(is(first.err, ec::timeout)) << describe(first.err);
  EXPECT_FALSE(ask<volume_record>(atom::get_v).err) << "the volume stays";
  EXPECT_EQ(disk->records.count("v1"), 1U) << "its record stays while the deletion runs";
  auto again = ask<atom::ok>(atom::create_v, option_map{}, uint64_t{0});
  EXPECT_TRUE(is(again.err, ec::aborted))
    << "a re-create is not told the half-deleted volume exists: " << describe(again.err);
  return_held(); // the deletion lands, late
  EXPECT_EQ(disk->records.count("v1"), 0U) << "the late deletion is adopted: the record goes";
  EXPECT_TRUE(is(ask<volume_record>(atom::get_v).err, ec::not_found)) << "the volume is gone";
  EXPECT_FALSE(ask<atom::ok>(atom::create_v, option_map{}, uint64_t{0}).err)
    << "a re-create now makes a new volume";
  EXPECT_EQ(storage->creates, 2);
}

TEST_F(volume_driver_test, a_mount_whose_caller_left_before_its_turn_is_not_started) {
  auto first = start(atom::mount_v, std::string{"c1"}, std::string{}, caller{});
  runner->start_next(); // c1's mount holds the volume
  auto from = caller::tracked();
  auto second = start(atom::mount_v, std::string{"c2"}, std::string{}, from);
  from.leave("connection closed"); // c2 waits behind c1, and its client leaves meanwhile
  return_held();
  EXPECT_FALSE(answer_of<std::string>(first).err);
  auto refused = answer_of<std::string>(second);
  ASSERT_TRUE(refused.given);
  EXPECT_TRUE(is(refused.err, ec::aborted)) << describe(refused.err);
  EXPECT_NE(describe(refused.err).find("caller went away"), std::string::npos)
    << describe(refused.err);
  auto rec = record();
  EXPECT_EQ(rec.mounts.count("c2"), 0U) << "nobody would ever Unmount c2";
  EXPECT_EQ(rec.mounts.at("c1"), 1U);
  EXPECT_EQ(storage->mounts, 1);
}

TEST_F(volume_driver_test, a_failed_remove_keeps_the_volume_and_its_record) {
  storage->fail_remove = true;
  EXPECT_TRUE(is(ask<atom::ok>(atom::remove_v, record_owner::docker, record_kind::volume).err,
                 ec::backend_failure));
  EXPECT_FALSE(ask<volume_record>(atom::get_v).err) << "the volume stays";
  EXPECT_EQ(disk->records.count("v1"), 1U);
}

TEST_F(volume_driver_test, a_mount_past_its_callers_deadline_is_not_started) {
  auto from = caller::tracked(caller::clock::now() - 1ms);
  auto late = ask<std::string>(atom::mount_v, std::string{"c1"}, std::string{}, from);
  EXPECT_TRUE(is(late.err, ec::aborted)) << describe(late.err);
  EXPECT_EQ(storage->mounts, 0);
  EXPECT_TRUE(record().mounts.empty());
}

TEST_F(volume_driver_test, mounts_that_arrive_while_the_host_mount_runs_wait_their_turn) {
  auto mount_of = [this](int i) {
    return start(atom::mount_v, "id" + std::to_string(i), std::string{}, caller{});
  };
  auto first = mount_of(0);
  std::vector<decltype(first)> rest;
  for (int i = 1; i < 8; ++i) {
    rest.push_back(mount_of(i));
  }
  EXPECT_EQ(runner->waiting(), 1U) << "one host mount; seven Mounts wait in the volume's queue";
  run_call();
  EXPECT_EQ(runner->waiting(), 0U) << "each of the seven only counts its ID";
  EXPECT_FALSE(answer_of<std::string>(first).err);
  for (auto& h : rest) {
    auto a = answer_of<std::string>(h);
    ASSERT_TRUE(a.given);
    EXPECT_FALSE(a.err) << describe(a.err);
  }
  EXPECT_EQ(storage->mounts, 1) << "one host mount for eight IDs";
  EXPECT_EQ(total_mounts(record()), 8U);

  std::vector<decltype(start(atom::unmount_v, std::string{}))> unmounts;
  for (int i = 0; i < 8; ++i) {
    unmounts.push_back(start(atom::unmount_v, "id" + std::to_string(i)));
  }
  EXPECT_EQ(runner->waiting(), 1U) << "seven Unmounts only count; the last unmounts the host";
  run_call();
  for (auto& h : unmounts) {
    auto a = answer_of<atom::ok>(h);
    ASSERT_TRUE(a.given);
    EXPECT_FALSE(a.err) << describe(a.err);
  }
  EXPECT_EQ(storage->unmounts, 1) << "one host unmount, at the last ID";
  EXPECT_EQ(total_mounts(record()), 0U);
}

TEST_F(volume_driver_test, a_create_that_lands_after_its_timeout_is_removed_in_turn) {
  volume_record rec;
  rec.name = "v2";
  spawn(rec, false);
  auto h = start(atom::create_v, option_map{}, uint64_t{0});
  ASSERT_TRUE(runner->start_next()) << "the create runs, and does not return";
  advance(timeout + 1ms);
  auto first = answer_of<atom::ok>(h);
  ASSERT_TRUE(first.given);
  EXPECT_TRUE(is(first.err, ec::timeout)) << describe(first.err);
  return_held(); // the storage is made, after its caller was told it failed
  EXPECT_EQ(runner->waiting(), 1U) << "the volume settles it in turn: a remove";
  run_call();
  EXPECT_EQ(storage->removes, 1) << "storage no record holds is not left behind";
  EXPECT_TRUE(is(ask<volume_record>(atom::get_v).err, ec::not_found));
  EXPECT_EQ(disk->records.count("v2"), 0U);
}
