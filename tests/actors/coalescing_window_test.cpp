// The coalescing window of a volume (actors/machine/coalescing_window.hpp): what merges,
// what a close gives, and a close that comes late.

#include "actors/machine/coalescing_window.hpp"

#include <gtest/gtest.h>

using namespace berth;

namespace {

modification sized(uint64_t bytes) {
  modification m;
  m.bytes = bytes;
  return m;
}

modification with(std::string key, std::string value) {
  modification m;
  m.parameters[std::move(key)] = std::move(value);
  return m;
}

} // namespace

TEST(coalescing_window, the_first_request_opens_a_window_and_the_next_merge_into_it) {
  coalescing_window<int> w;
  EXPECT_FALSE(w.is_open());
  auto opened = w.merge(sized(20), 1);
  EXPECT_EQ(opened, 1U);
  EXPECT_TRUE(w.is_open());
  EXPECT_EQ(w.merge(with("readAheadKB", "256"), 2), 0U) << "merged, nothing to schedule";
  EXPECT_EQ(w.merge(sized(20), 3), 0U);
  EXPECT_EQ(w.change().bytes, 20U);
  auto batch = w.close(opened);
  ASSERT_TRUE(batch);
  EXPECT_EQ(batch->number, opened);
  EXPECT_EQ(batch->change.bytes, 20U);
  EXPECT_EQ(batch->change.parameters.at("readAheadKB"), "256");
  EXPECT_EQ(batch->waiters, (std::vector<int>{1, 2, 3}));
  EXPECT_FALSE(w.is_open());
}

TEST(coalescing_window, a_close_meant_for_a_window_that_closed_already_does_nothing) {
  coalescing_window<int> w;
  auto first = w.merge(sized(10), 1);
  ASSERT_TRUE(w.close(first)); // early, at a drain
  auto second = w.merge(sized(30), 2);
  EXPECT_NE(second, first) << "windows are numbered afresh";
  EXPECT_FALSE(w.close(first)) << "the first window's timer, late";
  EXPECT_TRUE(w.is_open());
  EXPECT_FALSE(w.close(0));
  auto batch = w.close(second);
  ASSERT_TRUE(batch);
  EXPECT_EQ(batch->waiters, (std::vector<int>{2}));
}

TEST(coalescing_window, a_retiring_volume_takes_the_callers_of_the_open_window) {
  coalescing_window<int> w;
  auto n = w.merge(sized(10), 7);
  w.merge(sized(10), 8);
  EXPECT_EQ(w.take_waiters(), (std::vector<int>{7, 8}));
  EXPECT_FALSE(w.is_open());
  EXPECT_FALSE(w.close(n));
}
