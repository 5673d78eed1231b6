// A Mount and an Unmount sent straight to a volume from a thread that is no actor, as the
// Docker adapter sends them (docs/design.md, "Three hops"), driven by the test
// (tests/actors/driver_fixture.hpp): the volume answers through the request's callback,
// and a request that reaches a volume that has quit asks again instead of hanging.

#include <optional>

#include <gtest/gtest.h>

#include "tests/actors/driver_fixture.hpp"

using namespace berth;

namespace {

class volume_direct_test : public test::volume_driver_fixture {
protected:
  void SetUp() override { spawn_created(); }

  /// What became of one direct request.
  template <class R>
  struct outcome {
    std::optional<caf::expected<R>> answer;
    int answers = 0;
    bool dropped = false;

    /// The reply to send with the request; this must outlive it.
    direct_reply<R> reply() {
      return direct_reply<R>{[this](caf::expected<R> x) {
                               answer = std::move(x);
                               ++answers;
                             },
                             [this] { dropped = true; }};
    }
  };
};

} // namespace

TEST_F(volume_direct_test, a_mount_and_an_unmount_are_answered_through_their_callbacks) {
  outcome<std::string> mounted;
  caf::anon_send(vol, atom::mount_v, std::string{"c1"}, std::string{}, caller{}, mounted.reply());
  sched.run();
  EXPECT_FALSE(mounted.answer) << "not before the host mount ran";
  run_all_calls();
  ASSERT_TRUE(mounted.answer);
  ASSERT_TRUE(*mounted.answer) << describe(mounted.answer->error());
  EXPECT_EQ(**mounted.answer, record().mountpoint);
  EXPECT_EQ(mounted.answers, 1);
  EXPECT_FALSE(mounted.dropped);
  EXPECT_EQ(storage->mounts, 1);

  outcome<atom::ok> unmounted;
  caf::anon_send(vol, atom::unmount_v, std::string{"c1"}, unmounted.reply());
  sched.run();
  run_all_calls();
  ASSERT_TRUE(unmounted.answer);
  EXPECT_TRUE(*unmounted.answer) << describe(unmounted.answer->error());
  EXPECT_FALSE(unmounted.dropped);
  EXPECT_FALSE(record().mounted);
  EXPECT_EQ(storage->unmounts, 1);
}

TEST_F(volume_direct_test, a_refusal_is_answered_through_the_callback_too) {
  auto removed = ask<atom::ok>(atom::remove_v, record_owner::docker, record_kind::volume);
  ASSERT_TRUE(removed.given && !removed.err) << describe(removed.err);
  outcome<std::string> mounted;
  caf::anon_send(vol, atom::mount_v, std::string{"c1"}, std::string{}, caller{}, mounted.reply());
  sched.run();
  ASSERT_TRUE(mounted.answer) << "the actor still runs: it answers, it does not drop";
  EXPECT_TRUE(is(mounted.answer->error(), ec::not_found)) << describe(mounted.answer->error());
  EXPECT_FALSE(mounted.dropped);
  EXPECT_EQ(storage->mounts, 0);
}

TEST_F(volume_direct_test, a_request_that_reaches_a_volume_that_quit_asks_again) {
  self->send(vol, atom::retire_v);
  sched.run();
  outcome<std::string> mounted;
  caf::anon_send(vol, atom::mount_v, std::string{"c1"}, std::string{}, caller{}, mounted.reply());
  sched.run();
  EXPECT_TRUE(mounted.dropped) << "the adapter is told to ask the registry";
  EXPECT_FALSE(mounted.answer);
  EXPECT_EQ(storage->mounts, 0);
}

TEST_F(volume_direct_test, a_request_queued_when_the_volume_retires_is_refused_not_dropped) {
  start(atom::mount_v, std::string{"c1"}, std::string{}, caller{});
  ASSERT_TRUE(runner->start_next()) << "the host mount runs; the next Mount waits its turn";
  outcome<std::string> second;
  caf::anon_send(vol, atom::mount_v, std::string{"c2"}, std::string{}, caller{}, second.reply());
  sched.run();
  self->send(vol, atom::retire_v);
  sched.run();
  ASSERT_TRUE(second.answer);
  EXPECT_TRUE(is(second.answer->error(), ec::not_found)) << describe(second.answer->error());
  EXPECT_FALSE(second.dropped);
  return_held();
}
