#include <limits>

#include <gtest/gtest.h>

#include "core/errors.hpp"
#include "protocols/metrics/exposition.hpp"
#include "tests/protocols/metrics/refusal.hpp"

using namespace berth::metrics;
using berth::metrics::test::refusal;

namespace {

family histogram(std::string name, std::vector<histogram_series> series) {
  return family{std::move(name), "How long it took.", metric_type::histogram, {},
                std::move(series)};
}

histogram_data data(std::vector<double> bounds, std::vector<uint64_t> cumulative_counts,
                    double sum, uint64_t count) {
  return histogram_data{std::move(bounds), std::move(cumulative_counts), sum, count};
}

constexpr double inf = std::numeric_limits<double>::infinity();

} // namespace

TEST(histogram, cumulative_turns_per_bucket_counts_into_running_totals) {
  EXPECT_EQ(cumulative({2, 0, 3, 1}), (std::vector<uint64_t>{2, 2, 5, 6}));
  EXPECT_EQ(cumulative({}), std::vector<uint64_t>{});
  EXPECT_EQ(cumulative({0, 0}), (std::vector<uint64_t>{0, 0}));
}

TEST(histogram, buckets_ascend_end_in_inf_equal_to_count_then_sum_and_count) {
  auto out = render({histogram("op_duration_seconds",
                               {{{}, data({0.001, 0.01, 0.1, 1}, cumulative({3, 0, 2, 1}), 0.53, 7)}})});
  ASSERT_TRUE(out) << berth::describe(out.error());
  EXPECT_EQ(*out, "# HELP op_duration_seconds How long it took.\n"
                  "# TYPE op_duration_seconds histogram\n"
                  "op_duration_seconds_bucket{le=\"0.001\"} 3\n"
                  "op_duration_seconds_bucket{le=\"0.01\"} 3\n"
                  "op_duration_seconds_bucket{le=\"0.1\"} 5\n"
                  "op_duration_seconds_bucket{le=\"1\"} 6\n"
                  "op_duration_seconds_bucket{le=\"+Inf\"} 7\n"
                  "op_duration_seconds_sum 0.53\n"
                  "op_duration_seconds_count 7\n");
}

TEST(histogram, labelled_series_put_le_last_and_sort_by_labels) {
  auto out = render({histogram(
    "op_duration_seconds",
    {{{{"protocol", "docker"}, {"op", "mount"}}, data({0.5}, {1}, 0.25, 2)},
     {{{"op", "create"}, {"protocol", "csi"}}, data({0.5}, {0}, 0, 0)}})});
  ASSERT_TRUE(out) << berth::describe(out.error());
  EXPECT_EQ(*out, "# HELP op_duration_seconds How long it took.\n"
                  "# TYPE op_duration_seconds histogram\n"
                  "op_duration_seconds_bucket{op=\"create\",protocol=\"csi\",le=\"0.5\"} 0\n"
                  "op_duration_seconds_bucket{op=\"create\",protocol=\"csi\",le=\"+Inf\"} 0\n"
                  "op_duration_seconds_sum{op=\"create\",protocol=\"csi\"} 0\n"
                  "op_duration_seconds_count{op=\"create\",protocol=\"csi\"} 0\n"
                  "op_duration_seconds_bucket{op=\"mount\",protocol=\"docker\",le=\"0.5\"} 1\n"
                  "op_duration_seconds_bucket{op=\"mount\",protocol=\"docker\",le=\"+Inf\"} 2\n"
                  "op_duration_seconds_sum{op=\"mount\",protocol=\"docker\"} 0.25\n"
                  "op_duration_seconds_count{op=\"mount\",protocol=\"docker\"} 2\n");
}

TEST(histogram, no_bounds_is_just_the_inf_bucket) {
  auto out = render({histogram("h_seconds", {{{}, data({}, {}, 4.5, 3)}})});
  ASSERT_TRUE(out) << berth::describe(out.error());
  EXPECT_EQ(*out, "# HELP h_seconds How long it took.\n"
                  "# TYPE h_seconds histogram\n"
                  "h_seconds_bucket{le=\"+Inf\"} 3\n"
                  "h_seconds_sum 4.5\n"
                  "h_seconds_count 3\n");
}

TEST(histogram, bounds_that_do_not_strictly_increase_are_refused) {
  auto msg = refusal({histogram("h_seconds", {{{{"op", "a"}}, data({0.1, 1, 0.5}, {1, 2, 3}, 1, 3)}})});
  EXPECT_NE(msg.find("histogram h_seconds{op=\"a\""), std::string::npos) << msg;
  EXPECT_NE(msg.find("strictly increasing, but 0.5 follows 1"), std::string::npos) << msg;
  msg = refusal({histogram("h_seconds", {{{}, data({1, 1}, {1, 2}, 1, 3)}})});
  EXPECT_NE(msg.find("strictly increasing, but 1 follows 1"), std::string::npos) << msg;
}

TEST(histogram, infinite_or_nan_bounds_are_refused) {
  auto msg = refusal({histogram("h_seconds", {{{}, data({1, inf}, {1, 2}, 1, 2)}})});
  EXPECT_NE(msg.find("bucket bound +Inf is not finite"), std::string::npos) << msg;
  msg = refusal({histogram("h_seconds", {{{}, data({-inf, 1}, {0, 2}, 1, 2)}})});
  EXPECT_NE(msg.find("bucket bound -Inf is not finite"), std::string::npos) << msg;
  msg = refusal(
    {histogram("h_seconds", {{{}, data({std::numeric_limits<double>::quiet_NaN()}, {1}, 1, 2)}})});
  EXPECT_NE(msg.find("bucket bound NaN is not finite"), std::string::npos) << msg;
}

TEST(histogram, counts_that_are_not_cumulative_or_exceed_the_count_are_refused) {
  auto msg = refusal({histogram("h_seconds", {{{}, data({1, 2}, {3, 1}, 1, 4)}})});
  EXPECT_NE(msg.find("must be cumulative, but le=\"2\" has 1 after 3"), std::string::npos) << msg;
  msg = refusal({histogram("h_seconds", {{{}, data({1, 2}, {1, 5}, 1, 4)}})});
  EXPECT_NE(msg.find("a bucket holds 5 observations but the count is 4"), std::string::npos)
    << msg;
  msg = refusal({histogram("h_seconds", {{{}, data({1, 2}, {1}, 1, 4)}})});
  EXPECT_NE(msg.find("2 bucket bounds but 1 bucket counts"), std::string::npos) << msg;
}

TEST(histogram, a_series_may_not_bring_its_own_le_label) {
  auto msg = refusal({histogram("h_seconds", {{{{"le", "1"}}, data({}, {}, 0, 0)}})});
  EXPECT_NE(msg.find("label name \"le\""), std::string::npos) << msg;
  EXPECT_NE(msg.find("reserved"), std::string::npos) << msg;
  // A gauge may: le means nothing there.
  EXPECT_TRUE(render({family{"g", "G.", metric_type::gauge, {{{{"le", "1"}}, 1}}, {}}}));
}

TEST(histogram, duplicate_histogram_series_are_refused) {
  auto msg = refusal({histogram("h_seconds", {{{{"op", "a"}}, data({}, {}, 0, 0)},
                                              {{{"op", "a"}}, data({}, {}, 1, 1)}})});
  EXPECT_NE(msg.find("family h_seconds has two series h_seconds{op=\"a\"}"), std::string::npos)
    << msg;
}

TEST(histogram, a_family_named_like_a_histograms_series_is_refused) {
  family plain{"h_seconds_count", "Clash.", metric_type::gauge, {{{}, 1}}, {}};
  auto msg = refusal({histogram("h_seconds", {}), plain});
  EXPECT_NE(msg.find("h_seconds_count"), std::string::npos) << msg;
  EXPECT_NE(msg.find("collides"), std::string::npos) << msg;
  plain.name = "h_seconds_bucket";
  EXPECT_NE(refusal({plain, histogram("h_seconds", {})}).find("collides"), std::string::npos);
  plain.name = "h_seconds_sum";
  EXPECT_NE(refusal({plain, histogram("h_seconds", {})}).find("collides"), std::string::npos);
  plain.name = "h_seconds_total";
  EXPECT_TRUE(render({plain, histogram("h_seconds", {})}));
}

TEST(histogram, special_sums_are_spelled_as_prometheus_does) {
  auto out = render({histogram("h_seconds", {{{}, data({1}, {0}, inf, 1)}})});
  ASSERT_TRUE(out);
  EXPECT_NE(out->find("h_seconds_sum +Inf\n"), std::string::npos) << *out;
}
