// The backend calls of a volume (actors/machine/call_slot.hpp), fed events and the times
// they happened: every interleaving of a call, its report and the one timer is written
// down here, and none of it waits for a clock.

#include "actors/machine/call_slot.hpp"
#include "actors/machine/running_transition.hpp"

#include <gtest/gtest.h>

using namespace berth;
using namespace std::chrono_literals;

namespace {

using clock_t_ = call_slot::clock;

const clock_t_::time_point t0{};

/// A call named `what` whose continuation records its error into `*out`.
call_slot::submitted a_call(backend_call kind, std::optional<caf::error>* out = nullptr,
                            late_settle settle = {}) {
  return call_slot::submitted{kind, "2026-12-06T01:00:00Z", nullptr,
                              [out](caf::error err) {
                                if (out != nullptr) {
                                  *out = std::move(err);
                                }
                              },
                              std::move(settle)};
}

} // namespace

TEST(call_slot, a_call_that_reports_in_time_runs_its_continuation_once) {
  call_slot slot{30s};
  auto token = slot.reserve();
  std::optional<caf::error> out;
  auto arm = slot.begin(token, a_call(backend_call::mount, &out), t0);
  ASSERT_TRUE(arm);
  EXPECT_EQ(*arm, t0 + 30s);
  EXPECT_FALSE(slot.idle());
  auto report = slot.done(token);
  auto* f = std::get_if<call_slot::finished>(&report);
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->kind, backend_call::mount);
  EXPECT_EQ(f->began, t0);
  f->then(make_error(ec::internal, "boom"));
  ASSERT_TRUE(out && *out);
  EXPECT_TRUE(slot.idle());
  EXPECT_TRUE(slot.certain());
  // The same report again is a stray: nothing runs twice.
  EXPECT_TRUE(std::holds_alternative<call_slot::stray>(slot.done(token)));
}

TEST(call_slot, one_timer_serves_every_call_and_rearms_for_the_current_one) {
  call_slot slot{30s};
  auto first = slot.reserve();
  ASSERT_TRUE(slot.begin(first, a_call(backend_call::mount), t0));
  ASSERT_TRUE(std::holds_alternative<call_slot::finished>(slot.done(first)));
  // A timer is on its way for the first call: the second arms none of its own.
  auto second = slot.reserve();
  EXPECT_FALSE(slot.begin(second, a_call(backend_call::unmount), t0 + 10s));
  // It fires at the first call's deadline, early for the second: armed again for the rest.
  auto fired = slot.timer_fired(t0 + 30s);
  auto* nd = std::get_if<call_slot::not_due>(&fired);
  ASSERT_NE(nd, nullptr);
  ASSERT_TRUE(nd->arm_at);
  EXPECT_EQ(*nd->arm_at, t0 + 40s);
  EXPECT_FALSE(slot.idle());
  // Then it is due.
  fired = slot.timer_fired(t0 + 40s);
  auto* e = std::get_if<call_slot::expired>(&fired);
  ASSERT_NE(e, nullptr);
  EXPECT_EQ(e->token, second);
  EXPECT_EQ(e->call.kind, backend_call::unmount);
  EXPECT_TRUE(slot.idle());
}

TEST(call_slot, a_timer_that_finds_no_call_arms_nothing_and_the_next_call_arms_it) {
  call_slot slot{5s};
  auto token = slot.reserve();
  ASSERT_TRUE(slot.begin(token, a_call(backend_call::stage), t0));
  ASSERT_TRUE(std::holds_alternative<call_slot::finished>(slot.done(token)));
  auto fired = slot.timer_fired(t0 + 5s);
  ASSERT_TRUE(std::holds_alternative<call_slot::not_due>(fired));
  EXPECT_FALSE(std::get<call_slot::not_due>(fired).arm_at);
  auto next = slot.reserve();
  auto arm = slot.begin(next, a_call(backend_call::publish), t0 + 7s);
  ASSERT_TRUE(arm);
  EXPECT_EQ(*arm, t0 + 12s);
}

TEST(call_slot, a_hung_call_makes_the_volume_uncertain_until_it_returns_late) {
  call_slot slot{30s};
  auto token = slot.reserve();
  int settled = 0;
  std::optional<caf::error> out;
  ASSERT_TRUE(slot.begin(token,
                         a_call(backend_call::stage, &out,
                                [&](const committed_record&) {
                                  ++settled;
                                  return settlement{};
                                }),
                         t0));
  auto fired = slot.timer_fired(t0 + 30s);
  auto* e = std::get_if<call_slot::expired>(&fired);
  ASSERT_NE(e, nullptr);
  EXPECT_TRUE(slot.hang(std::move(*e), t0 + 30s));
  EXPECT_FALSE(slot.certain());
  EXPECT_TRUE(slot.idle());
  auto err = slot.still_hung("v1", "publish at /t", t0 + 45s);
  EXPECT_TRUE(is(err, ec::aborted));
  EXPECT_EQ(describe(err),
            "volume v1: its stage started at 2026-12-06T01:00:00Z has not returned "
            "(hung for 15 s); publish at /t not started, retry later");
  auto report = slot.done(token);
  auto* late = std::get_if<call_slot::returned_late>(&report);
  ASSERT_NE(late, nullptr);
  EXPECT_TRUE(late->certain_again);
  EXPECT_EQ(late->call.kind, backend_call::stage);
  EXPECT_EQ(late->call.began, t0);
  EXPECT_EQ(late->call.since, t0 + 30s);
  ASSERT_TRUE(late->call.settle);
  late->call.settle(committed_record{});
  EXPECT_EQ(settled, 1);
  EXPECT_TRUE(slot.certain());
  EXPECT_FALSE(out); // its continuation was the driver's to run at the timeout, not here
}

TEST(call_slot, a_call_beside_a_hung_one_and_the_volume_is_certain_only_after_both_return) {
  call_slot slot{1s};
  auto unmount = slot.reserve();
  ASSERT_TRUE(slot.begin(unmount, a_call(backend_call::unmount), t0));
  auto fired = slot.timer_fired(t0 + 1s);
  ASSERT_TRUE(slot.hang(std::get<call_slot::expired>(std::move(fired)), t0 + 1s));
  EXPECT_TRUE(is(slot.may_begin("v1", "unmount", false, t0 + 1s), ec::aborted));
  // The lazy detach that stands in for the hung unmount.
  EXPECT_FALSE(slot.may_begin("v1", "lazy unmount", true, t0 + 1s));
  auto detach = slot.reserve();
  EXPECT_TRUE(slot.begin(detach, a_call(backend_call::lazy_unmount), t0 + 1s));
  fired = slot.timer_fired(t0 + 2s);
  EXPECT_FALSE(slot.hang(std::get<call_slot::expired>(std::move(fired)), t0 + 2s))
    << "already uncertain";
  EXPECT_EQ(slot.hung().size(), 2U);
  auto first = slot.done(unmount);
  ASSERT_TRUE(std::holds_alternative<call_slot::returned_late>(first));
  EXPECT_FALSE(std::get<call_slot::returned_late>(first).certain_again);
  EXPECT_FALSE(slot.certain());
  auto second = slot.done(detach);
  ASSERT_TRUE(std::holds_alternative<call_slot::returned_late>(second));
  EXPECT_TRUE(std::get<call_slot::returned_late>(second).certain_again);
  EXPECT_TRUE(slot.certain());
}

TEST(call_slot, an_expired_call_that_never_started_leaves_the_volume_certain) {
  call_slot slot{1s};
  auto token = slot.reserve();
  ASSERT_TRUE(slot.begin(token, a_call(backend_call::create), t0));
  auto fired = slot.timer_fired(t0 + 1s);
  ASSERT_TRUE(std::holds_alternative<call_slot::expired>(fired));
  // The driver found it dropped by the executor and did not hang it.
  EXPECT_TRUE(slot.certain());
  EXPECT_TRUE(slot.idle());
  EXPECT_TRUE(std::holds_alternative<call_slot::stray>(slot.done(token)));
}

TEST(call_slot, tokens_are_never_reused_and_zero_is_no_call) {
  call_slot slot{1s};
  auto a = slot.reserve();
  auto b = slot.reserve();
  EXPECT_NE(a, 0U);
  EXPECT_NE(a, b);
  EXPECT_TRUE(std::holds_alternative<call_slot::stray>(slot.done(0)));
}
