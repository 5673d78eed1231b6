// The health table (core/telemetry/volume_health): the sampler's sight replaces what it saw
// before, a hung call stays until its actor clears it, and the counts are per reason.

#include "core/telemetry/volume_health.hpp"

#include <set>
#include <string>

#include <gtest/gtest.h>

namespace berth {
namespace {

size_t at(abnormal_reason r) {
  return static_cast<size_t>(r);
}

TEST(volume_health, a_volume_no_sample_names_is_healthy) {
  volume_health h;
  EXPECT_TRUE(h.of("v").empty());
  EXPECT_EQ(describe_conditions(h.of("v")), "");
}

TEST(volume_health, each_sample_replaces_the_last_and_keeps_reason_order) {
  volume_health h;
  h.replace_observed(
    {{"v", {{abnormal_reason::mount_gone, "gone"}, {abnormal_reason::image_short, "short"}}},
     {"w", {{abnormal_reason::image_missing, "missing"}}}});
  auto v = h.of("v");
  ASSERT_EQ(v.size(), 2u);
  EXPECT_EQ(v[0].reason, abnormal_reason::image_short);
  EXPECT_EQ(describe_conditions(v), "short; gone");
  EXPECT_EQ(h.counts()[at(abnormal_reason::image_missing)], 1);
  h.replace_observed({{"w", {}}});
  EXPECT_TRUE(h.of("v").empty()) << "v is healthy again";
  EXPECT_TRUE(h.of("w").empty()) << "an empty sight is healthy";
  for (auto n : h.counts()) {
    EXPECT_EQ(n, 0);
  }
}

TEST(volume_health, a_hung_call_outlives_samples_until_its_actor_clears_it) {
  volume_health h;
  h.set_hung("v", "mount did not return within 100 ms");
  h.replace_observed({{"v", {{abnormal_reason::mount_gone, "gone"}}}});
  auto v = h.of("v");
  ASSERT_EQ(v.size(), 2u);
  EXPECT_EQ(v[1].reason, abnormal_reason::call_hung);
  h.replace_observed({});
  ASSERT_EQ(h.of("v").size(), 1u);
  EXPECT_EQ(h.counts()[at(abnormal_reason::call_hung)], 1);
  h.clear_hung("v");
  EXPECT_TRUE(h.of("v").empty());
  EXPECT_EQ(h.counts()[at(abnormal_reason::call_hung)], 0);
}

TEST(volume_health, modifications_failing_in_a_row_until_one_is_applied_or_the_volume_goes) {
  volume_health h;
  for (int i = 1; i < modify_failures_abnormal; ++i) {
    h.modify_failed("v", "the backend failed");
  }
  EXPECT_TRUE(h.of("v").empty());
  h.modify_failed("v", "mkfs failed");
  ASSERT_EQ(h.of("v").size(), 1U);
  EXPECT_NE(h.of("v")[0].message.find("the last with: mkfs failed"), std::string::npos);
  EXPECT_EQ(h.counts()[at(abnormal_reason::modify_failing)], 1);
  h.modify_applied("v");
  EXPECT_TRUE(h.of("v").empty());
  h.modify_failed("v", "again");
  EXPECT_TRUE(h.of("v").empty()) << "the run starts again";
  for (int i = 0; i < modify_failures_abnormal; ++i) {
    h.modify_failed("w", "x");
  }
  h.set_hung("w", "hung");
  h.forget("w");
  EXPECT_TRUE(h.of("w").empty()) << "a volume gone takes its marks with it";
}

TEST(volume_health, every_reason_has_its_own_name) {
  std::set<std::string> names;
  for (size_t i = 0; i < abnormal_reason_count; ++i) {
    names.insert(abnormal_reason_name(static_cast<abnormal_reason>(i)));
  }
  EXPECT_EQ(names.size(), abnormal_reason_count);
  EXPECT_EQ(names.count("unknown"), 0u);
}

} // namespace
} // namespace berth
