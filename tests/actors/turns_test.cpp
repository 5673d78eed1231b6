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

namespace {

queued_step changing(std::string target, bool publish = true) {
  auto s = named((publish ? "publish at " : "unpublish of ") + target);
  s.change = path_change{target, std::nullopt};
  if (publish) {
    s.change->publish = publish_request{};
  }
  return s;
}

std::vector<std::string> whats(const std::vector<queued_step>& steps) {
  std::vector<std::string> out;
  for (auto& s : steps) {
    out.push_back(s.what);
  }
  return out;
}

} // namespace

TEST(turns, path_changes_of_other_paths_join_the_running_one_in_order) {
  turns t;
  t.push(changing("/t/a"));
  t.push(changing("/t/b", false));
  t.push(changing("/t/c"));
  t.push(named("unstage of /s"));
  t.push(changing("/t/d"));
  auto first = t.next();
  ASSERT_TRUE(first && first->change);
  auto joined = t.take_joining(first->change->target, 8);
  EXPECT_EQ(whats(joined), (std::vector<std::string>{"unpublish of /t/b", "publish at /t/c"}))
    << "the unstage does not join, and /t/d does not overtake it";
  t.finish();
  EXPECT_EQ(t.next()->what, "unstage of /s");
}

TEST(turns, a_change_of_a_path_already_in_the_turn_waits_for_the_next) {
  turns t;
  t.push(changing("/t/a"));
  t.push(changing("/t/b"));
  t.push(changing("/t/a", false));
  t.push(changing("/t/c"));
  auto first = t.next();
  auto joined = t.take_joining(first->change->target, 8);
  EXPECT_EQ(whats(joined), (std::vector<std::string>{"publish at /t/b"}))
    << "the unpublish of /t/a runs after its publish, and nothing behind it overtakes it";
  t.finish();
  EXPECT_EQ(t.next()->what, "unpublish of /t/a");
}

TEST(turns, a_shared_turn_takes_at_most_max_and_nothing_while_none_runs) {
  turns t;
  EXPECT_TRUE(t.take_joining("/t/x", 8).empty()) << "nothing runs, nothing waits";
  for (auto p : {"/t/a", "/t/b", "/t/c", "/t/d"}) {
    t.push(changing(p));
  }
  EXPECT_TRUE(t.take_joining("/t/x", 8).empty()) << "no step runs: nothing joins one";
  auto first = t.next();
  EXPECT_EQ(t.take_joining(first->change->target, 2).size(), 2U);
  t.finish();
  EXPECT_EQ(t.next()->what, "publish at /t/d");
}

TEST(turns, take_while_takes_in_order_until_the_first_step_it_refuses) {
  turns t;
  t.push(named("mount a"));
  for (auto* what : {"mount b", "unmount a", "unmount b", "mount c"}) {
    t.push(named(what));
  }
  ASSERT_TRUE(t.next());
  auto joined = t.take_while(8, [](const queued_step& s) { return s.what != "unmount b"; });
  EXPECT_EQ(whats(joined), (std::vector<std::string>{"mount b", "unmount a"}));
  auto left = t.take_waiting();
  ASSERT_EQ(left.size(), 2U) << "the refused step and what is behind it keep waiting";
  EXPECT_EQ(left[0].what, "unmount b");
  EXPECT_EQ(left[1].what, "mount c");
}

TEST(turns, take_while_takes_nothing_while_no_step_runs_and_at_most_max) {
  turns t;
  t.push(named("mount a"));
  t.push(named("mount b"));
  t.push(named("mount c"));
  EXPECT_TRUE(t.take_while(8, [](const queued_step&) { return true; }).empty());
  ASSERT_TRUE(t.next());
  EXPECT_EQ(t.take_while(1, [](const queued_step&) { return true; }).size(), 1U);
}
