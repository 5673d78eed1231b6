// The turns of a volume (actors/machine/turns.hpp): one step runs at a time, in order.

#include "actors/machine/turns.hpp"

#include <gtest/gtest.h>

using namespace berth;

namespace {

queued_step named(std::string what) {
  queued_step s;
  s.what = std::move(what);
  return s;
}

} // namespace

TEST(turns, one_step_runs_at_a_time_in_the_order_they_came) {
  turns t;
  EXPECT_TRUE(t.idle());
  EXPECT_FALSE(t.next());
  t.push(named("mount"));
  t.push(named("unmount"));
  auto first = t.next();
  ASSERT_TRUE(first);
  EXPECT_EQ(first->what, "mount");
  EXPECT_FALSE(t.next()) << "mount still runs";
  EXPECT_FALSE(t.idle());
  t.finish();
  auto second = t.next();
  ASSERT_TRUE(second);
  EXPECT_EQ(second->what, "unmount");
  t.finish();
  EXPECT_TRUE(t.idle());
}

TEST(turns, a_retiring_volume_takes_what_waits_and_the_running_step_still_ends) {
  turns t;
  t.push(named("stage at /s"));
  t.push(named("publish at /t"));
  t.push(named("remove"));
  ASSERT_TRUE(t.next());
  auto waiting = t.take_waiting();
  ASSERT_EQ(waiting.size(), 2U);
  EXPECT_EQ(waiting[0].what, "publish at /t");
  EXPECT_FALSE(t.idle());
  t.finish();
  EXPECT_TRUE(t.idle());
}
