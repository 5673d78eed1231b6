// When a node writes its capacity: the rule alone, on a clock the test moves.

#include <gtest/gtest.h>

#include "protocols/kube/agent/capacity_report.hpp"

namespace berth::kube::agent {
namespace {

using namespace std::chrono_literals;
constexpr uint64_t mib = 1ull << 20;
constexpr uint64_t gib = 1ull << 30;

TEST(meaningful_change, counts_the_larger_of_the_bytes_and_the_percent) {
  capacity_rule rule; // 64 MiB or 1 %
  // 100 GiB: 1 % is 1 GiB, more than 64 MiB.
  EXPECT_FALSE(meaningful_change({{"block", 100 * gib}}, {{"block", 100 * gib - 1000 * mib}}, rule));
  EXPECT_TRUE(meaningful_change({{"block", 100 * gib}}, {{"block", 100 * gib - gib}}, rule));
  EXPECT_TRUE(meaningful_change({{"block", 100 * gib}}, {{"block", 101 * gib}}, rule));
  // 2 GiB: 1 % is 20 MiB, less than 64 MiB.
  EXPECT_FALSE(meaningful_change({{"block", 2 * gib}}, {{"block", 2 * gib - 63 * mib}}, rule));
  EXPECT_TRUE(meaningful_change({{"block", 2 * gib}}, {{"block", 2 * gib - 64 * mib}}, rule));
}

TEST(meaningful_change, running_out_or_a_backend_coming_or_going_always_counts) {
  capacity_rule rule;
  EXPECT_TRUE(meaningful_change({{"block", 10 * mib}}, {{"block", 0}}, rule));
  EXPECT_TRUE(meaningful_change({{"block", 0}}, {{"block", 10 * mib}}, rule));
  EXPECT_TRUE(meaningful_change({{"block", gib}}, {{"block", gib}, {"local", gib}}, rule));
  EXPECT_TRUE(meaningful_change({{"block", gib}}, {{"local", gib}}, rule));
  EXPECT_TRUE(meaningful_change({{"block", gib}}, {}, rule));
  EXPECT_FALSE(meaningful_change({{"block", gib}}, {{"block", gib}}, rule));
}

TEST(capacity_report, writes_at_most_once_an_interval_unless_forced) {
  capacity_report report{capacity_rule{}}; // 5 s
  auto t0 = capacity_report::clock::time_point{} + 1h;
  capacity_by_backend full{{"block", 100 * gib}};
  capacity_by_backend less{{"block", 90 * gib}};
  EXPECT_TRUE(report.due(full, t0, false)) << "nothing was written yet";
  report.written(full, t0);
  EXPECT_FALSE(report.due(less, t0 + 4999ms, false)) << "within the interval";
  EXPECT_TRUE(report.due(less, t0 + 5s, false));
  EXPECT_TRUE(report.due(less, t0 + 1ms, true)) << "a resync writes whatever the interval";
  EXPECT_TRUE(report.due(full, t0 + 1ms, true)) << "a resync writes even what is written";
  EXPECT_FALSE(report.due(full, t0 + 1h, false)) << "no change, no write";
  report.written(less, t0 + 5s);
  EXPECT_FALSE(report.due(full, t0 + 9s, false));
  EXPECT_TRUE(report.due(full, t0 + 10s, false));
}

} // namespace
} // namespace berth::kube::agent
