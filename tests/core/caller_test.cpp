#include "core/caller.hpp"

#include <gtest/gtest.h>

using namespace berth;
using namespace std::chrono_literals;

TEST(caller, an_untracked_caller_never_leaves) {
  caller c;
  c.leave("closed");
  EXPECT_EQ(c.gone(), "");
  int runs = 0;
  c.on_gone([&](const std::string&) { ++runs; });
  EXPECT_EQ(runs, 0);
}

TEST(caller, copies_share_one_state_and_the_first_reason_stays) {
  auto c = caller::tracked();
  auto copy = c;
  EXPECT_EQ(copy.gone(), "");
  c.leave("the client closed the connection");
  c.leave("something later");
  EXPECT_EQ(copy.gone(), "the client closed the connection");
}

TEST(caller, a_passed_deadline_counts_as_gone) {
  auto c = caller::tracked(caller::clock::now() - 1ms);
  EXPECT_EQ(c.gone(), "its deadline passed");
  int runs = 0;
  c.on_gone([&](const std::string& why) {
    ++runs;
    EXPECT_EQ(why, "its deadline passed");
  });
  EXPECT_EQ(runs, 1);
}

TEST(caller, on_gone_runs_once_when_it_leaves_and_never_after_an_answer) {
  auto left = caller::tracked();
  int runs = 0;
  left.on_gone([&](const std::string&) { ++runs; });
  EXPECT_EQ(runs, 0);
  left.leave("closed");
  left.leave("closed again");
  EXPECT_EQ(runs, 1);
  left.on_gone([&](const std::string&) { ++runs; });
  EXPECT_EQ(runs, 2) << "registered after it left: runs at once";

  auto answered = caller::tracked();
  int never = 0;
  answered.on_gone([&](const std::string&) { ++never; });
  answered.answered();
  answered.leave("closed after the answer");
  answered.on_gone([&](const std::string&) { ++never; });
  EXPECT_EQ(never, 0);
  EXPECT_EQ(answered.gone(), "");
}

TEST(caller, the_peer_process_is_shared_by_copies_and_absent_when_unknown) {
  EXPECT_EQ(caller{}.peer(), nullptr);
  EXPECT_EQ(caller::tracked().peer(), nullptr);
  auto who = std::make_shared<const process_stat>(process_stat{4242, 981273, "dockerd"});
  auto c = caller::tracked(caller::clock::time_point::max(), who);
  auto copy = c;
  ASSERT_NE(copy.peer(), nullptr);
  EXPECT_EQ(copy.peer(), who.get()) << "one read per connection, shared, never copied";
  EXPECT_EQ(copy.peer()->command, "dockerd");
  c.leave("closed");
  EXPECT_EQ(copy.peer(), who.get()) << "a caller that left still names its process";
}
