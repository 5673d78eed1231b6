// The health sampler (apps/berthd/health_sampler.cpp): each sample replaces the table's
// observed conditions, a sample that could not list the records or read the host keeps
// the last ones rather than calling every volume healthy, and a volume whose record changed
// during the look keeps its last ones too.

#include "apps/berthd/health_sampler.hpp"

#include <gtest/gtest.h>

#include "core/errors.hpp"

namespace berth {
namespace {

using seen_map = std::map<std::string, volume_conditions>;

struct fixture {
  std::shared_ptr<telemetry> stats = std::make_shared<telemetry>(std::vector<std::string>{});
  caf::expected<std::vector<volume_record>> records = std::vector<volume_record>{};
  caf::expected<seen_map> seen = seen_map{};
  health_sampler sampler{[this] { return records; }, stats, std::chrono::hours(1),
                         [this](const std::vector<volume_record>&) { return seen; }};
};

TEST(health_sampler, each_sample_replaces_the_observed_conditions) {
  fixture f;
  f.seen = seen_map{{"a", {{abnormal_reason::image_missing, "gone"}}}};
  f.sampler.sample_once();
  ASSERT_EQ(f.stats->health.of("a").size(), 1U);
  f.seen = seen_map{};
  f.sampler.sample_once();
  EXPECT_TRUE(f.stats->health.of("a").empty());
}

TEST(health_sampler, a_failed_sample_keeps_the_last_conditions) {
  fixture f;
  f.seen = seen_map{{"a", {{abnormal_reason::mount_gone, "gone"}}}};
  f.sampler.sample_once();
  f.records = make_error(ec::timeout, "the registry did not answer");
  f.sampler.sample_once();
  EXPECT_EQ(f.stats->health.of("a").size(), 1U) << "no list: not a sight of health";
  f.records = std::vector<volume_record>{};
  f.seen = make_error(ec::backend_failure, "cannot read /proc/self/mountinfo");
  f.sampler.sample_once();
  EXPECT_EQ(f.stats->health.of("a").size(), 1U) << "no mountinfo: not a sight of health";
}

TEST(health_sampler, a_volume_whose_record_changed_during_the_look_keeps_its_last_conditions) {
  fixture f;
  volume_record staged;
  staged.name = "v";
  staged.staging_path = "/staging/v";
  volume_record other;
  other.name = "w";
  f.records = std::vector<volume_record>{staged, other};
  f.seen = seen_map{{"v", {{abnormal_reason::mount_gone, "gone"}}}};
  f.sampler.sample_once();
  ASSERT_EQ(f.stats->health.of("v").size(), 1U) << "the same record before and after: seen";

  // v is unstaged while the host is read: the look at it is neither before nor after.
  int lists = 0;
  auto unstaged = staged;
  unstaged.staging_path.clear();
  health_sampler racing{[&]() -> caf::expected<std::vector<volume_record>> {
                          return ++lists == 1 ? std::vector<volume_record>{staged, other}
                                              : std::vector<volume_record>{unstaged, other};
                        },
                        f.stats, std::chrono::hours(1),
                        [](const std::vector<volume_record>&) {
                          return caf::expected<seen_map>{
                            seen_map{{"v", {{abnormal_reason::image_missing, "half seen"}}},
                                     {"w", {{abnormal_reason::image_short, "short"}}}}};
                        }};
  racing.sample_once();
  auto v = f.stats->health.of("v");
  ASSERT_EQ(v.size(), 1U);
  EXPECT_EQ(v[0].reason, abnormal_reason::mount_gone) << "v keeps what was seen last round";
  EXPECT_EQ(f.stats->health.of("w").size(), 1U) << "w did not change: seen as it is";
}

TEST(health_sampler, the_block_sight_of_no_block_backend_is_all_healthy) {
  volume_record rec;
  rec.name = "v";
  rec.backend = "block";
  auto seen = block_conditions_of(nullptr)({rec});
  ASSERT_TRUE(seen);
  EXPECT_TRUE(seen->empty());
}

} // namespace
} // namespace berth
