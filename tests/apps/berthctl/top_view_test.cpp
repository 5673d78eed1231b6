// berthctl top's arithmetic and screen (top_view.hpp) and berthctl status's text.

#include "apps/berthctl/top_view.hpp"

#include <cmath>
#include <limits>

#include <rapidjson/document.h>
#include <gtest/gtest.h>

#include "apps/berthctl/berthctl_status.hpp"
#include "core/errors.hpp"

using namespace berth;
using namespace berth::cli;

namespace {

metrics::histogram_data hist(std::vector<double> bounds, std::vector<uint64_t> cumulative,
                             uint64_t count) {
  metrics::histogram_data h;
  h.upper_bounds = std::move(bounds);
  h.cumulative_counts = std::move(cumulative);
  h.count = count;
  return h;
}

operation_sample op(const char* protocol, const char* operation,
                    std::map<std::string, uint64_t> codes, metrics::histogram_data h) {
  operation_sample s;
  s.protocol = protocol;
  s.operation = operation;
  s.codes = std::move(codes);
  for (const auto& [code, n] : s.codes) {
    s.count += n;
  }
  s.duration = std::move(h);
  return s;
}

const std::vector<double> ms_bounds{0.001, 0.01};

} // namespace

// -- histogram_quantile ----------------------------------------------------------------

TEST(histogram_quantile, is_nan_without_observations_or_finite_bounds) {
  EXPECT_TRUE(std::isnan(histogram_quantile(0.5, hist({1, 2}, {0, 0}, 0))));
  EXPECT_TRUE(std::isnan(histogram_quantile(0.5, hist({}, {}, 0))));
  // Only the +Inf bucket: nothing to interpolate between.
  EXPECT_TRUE(std::isnan(histogram_quantile(0.5, hist({}, {}, 5))));
  // Buckets that do not fit their bounds.
  EXPECT_TRUE(std::isnan(histogram_quantile(0.5, hist({1, 2}, {3}, 3))));
  EXPECT_TRUE(std::isnan(histogram_quantile(0.5, hist({1}, {1, 2}, 3))));
}

TEST(histogram_quantile, outside_zero_to_one_is_infinite_and_nan_is_nan) {
  auto h = hist({1}, {4}, 4);
  EXPECT_EQ(histogram_quantile(-0.1, h), -std::numeric_limits<double>::infinity());
  EXPECT_EQ(histogram_quantile(1.1, h), std::numeric_limits<double>::infinity());
  EXPECT_TRUE(std::isnan(histogram_quantile(std::numeric_limits<double>::quiet_NaN(), h)));
}

TEST(histogram_quantile, interpolates_from_zero_in_a_single_bucket) {
  auto h = hist({1}, {4}, 4);
  EXPECT_DOUBLE_EQ(histogram_quantile(0.5, h), 0.5);
  EXPECT_DOUBLE_EQ(histogram_quantile(0.25, h), 0.25);
  EXPECT_DOUBLE_EQ(histogram_quantile(1, h), 1.0);
  EXPECT_DOUBLE_EQ(histogram_quantile(0, h), 0.0);
}

TEST(histogram_quantile, a_rank_in_the_inf_bucket_gives_the_highest_finite_bound) {
  EXPECT_DOUBLE_EQ(histogram_quantile(0.5, hist({1, 2}, {0, 0}, 3)), 2.0);
  EXPECT_DOUBLE_EQ(histogram_quantile(0.99, hist({1, 2}, {0, 0}, 3)), 2.0);
  auto h = hist({1, 2}, {1, 1}, 10);
  EXPECT_DOUBLE_EQ(histogram_quantile(0.5, h), 2.0);
  EXPECT_DOUBLE_EQ(histogram_quantile(0.1, h), 1.0); // rank 1: the top of the first bucket
  EXPECT_DOUBLE_EQ(histogram_quantile(0.11, h), 2.0);
}

TEST(histogram_quantile, a_rank_on_a_bucket_edge_gives_that_bucket_upper_bound) {
  auto h = hist({1, 2, 4}, {2, 4, 4}, 4);
  EXPECT_DOUBLE_EQ(histogram_quantile(0.5, h), 1.0);
  EXPECT_DOUBLE_EQ(histogram_quantile(0.75, h), 1.5);
  EXPECT_DOUBLE_EQ(histogram_quantile(1.0, h), 2.0); // not 4: the third bucket is empty
}

TEST(histogram_quantile, interpolates_between_the_bucket_bounds) {
  auto h = hist({0.001, 0.01, 0.1}, {0, 10, 10}, 10);
  EXPECT_DOUBLE_EQ(histogram_quantile(0.5, h), 0.0055);
  EXPECT_DOUBLE_EQ(histogram_quantile(0.99, h), 0.001 + 0.009 * 0.99);
  // Two buckets: 1 of 4 below 1, 3 in (1, 3].
  auto two = hist({1, 3}, {1, 4}, 4);
  EXPECT_DOUBLE_EQ(histogram_quantile(0.5, two), 1.0 + 2.0 * (1.0 / 3.0));
}

TEST(histogram_quantile, zero_is_the_lower_bound_of_the_first_bucket_holding_one) {
  EXPECT_DOUBLE_EQ(histogram_quantile(0, hist({1, 2}, {0, 3}, 3)), 1.0);
}

TEST(histogram_quantile, a_first_bound_at_or_below_zero_is_returned_as_is) {
  EXPECT_DOUBLE_EQ(histogram_quantile(0.25, hist({0, 1}, {2, 4}, 4)), 0.0);
}

TEST(histogram_quantile, decreasing_counts_are_read_as_the_count_before_them) {
  // {3, 2, 5} is read as {3, 3, 5}.
  EXPECT_DOUBLE_EQ(histogram_quantile(0.5, hist({1, 2, 4}, {3, 2, 5}, 5)), 2.5 / 3);
  // A count below the last bucket's: the bucket's count is the total.
  EXPECT_DOUBLE_EQ(histogram_quantile(0.5, hist({1}, {4}, 3)), 0.5);
}

// -- parse_operations -----------------------------------------------------------------

TEST(parse_operations, reads_what_the_route_writes) {
  auto s = parse_operations(
    R"({"monotonic_seconds":12.5,"operations":[{"protocol":"docker","operation":"mount",)"
    R"("count":3,"codes":{"ok":2,"not_found":1},"duration":{"upper_bounds":[0.001,0.01],)"
    R"("cumulative_counts":[2,3],"sum":0.004,"count":3}}]})");
  ASSERT_TRUE(s) << describe(s.error());
  EXPECT_DOUBLE_EQ(s->monotonic_seconds, 12.5);
  ASSERT_EQ(s->operations.size(), 1u);
  const auto& m = s->operations[0];
  EXPECT_EQ(m.protocol, "docker");
  EXPECT_EQ(m.operation, "mount");
  EXPECT_EQ(m.count, 3u);
  EXPECT_EQ(m.codes, (std::map<std::string, uint64_t>{{"ok", 2}, {"not_found", 1}}));
  EXPECT_EQ(m.duration.upper_bounds, ms_bounds);
  EXPECT_EQ(m.duration.cumulative_counts, (std::vector<uint64_t>{2, 3}));
  EXPECT_EQ(m.duration.count, 3u);
}

TEST(parse_operations, refuses_what_it_cannot_read_naming_it) {
  auto refusal = [](const char* json) {
    auto s = parse_operations(json);
    EXPECT_FALSE(s) << json;
    return s ? std::string{} : describe(s.error());
  };
  const std::string prefix = "an unreadable /v1/operations answer: ";
  EXPECT_EQ(refusal("<html>"), prefix + "not a JSON object");
  EXPECT_EQ(refusal(R"({"operations":[]})"),
            prefix + "it needs monotonic_seconds (a number) and operations (an array)");
  EXPECT_EQ(refusal(R"({"monotonic_seconds":1,"operations":[{"protocol":"docker"}]})"),
            prefix + "an operation needs protocol, operation, count, codes and duration");
  EXPECT_EQ(refusal(R"({"monotonic_seconds":1,"operations":[{"protocol":"docker",)"
                    R"("operation":"mount","count":1,"codes":{"ok":-1},"duration":{}}]})"),
            prefix + "docker mount: the count of code ok is not a non-negative integer");
  EXPECT_EQ(refusal(R"({"monotonic_seconds":1,"operations":[{"protocol":"docker",)"
                    R"("operation":"mount","count":1,"codes":{},"duration":{"upper_bounds":)"
                    R"([1,2],"cumulative_counts":[1],"sum":0,"count":1}}]})"),
            prefix + "docker mount: 2 upper bounds but 1 cumulative counts");
}

// -- compute_top ------------------------------------------------------------------------

TEST(compute_top, rates_and_quantiles_come_from_the_difference_of_two_samples) {
  operations_sample before;
  before.monotonic_seconds = 100;
  before.operations = {
    op("docker", "mount", {{"ok", 9}, {"not_found", 1}}, hist(ms_bounds, {5, 10}, 10)),
    op("docker", "get", {{"ok", 7}}, hist(ms_bounds, {7, 7}, 7)),
    op("csi", "NodeStageVolume", {{"ok", 50}}, hist(ms_bounds, {50, 50}, 50))};
  operations_sample after;
  after.monotonic_seconds = 102;
  after.operations = {
    op("docker", "mount", {{"ok", 27}, {"not_found", 3}}, hist(ms_bounds, {5, 30}, 30)),
    op("docker", "get", {{"ok", 7}}, hist(ms_bounds, {7, 7}, 7)),
    // Fewer than before: berthd restarted in between; counts from zero.
    op("csi", "NodeStageVolume", {{"ok", 6}}, hist(ms_bounds, {0, 6}, 6)),
    // New since the first sample.
    op("admin", "list", {{"ok", 4}}, hist(ms_bounds, {4, 4}, 4))};
  auto view = compute_top(before, after);
  EXPECT_DOUBLE_EQ(view.interval_seconds, 2.0);
  ASSERT_EQ(view.rows.size(), 4u);
  // By rate, highest first.
  EXPECT_EQ(view.rows[0].operation, "mount");
  EXPECT_EQ(view.rows[1].operation, "NodeStageVolume");
  EXPECT_EQ(view.rows[2].operation, "list");
  EXPECT_EQ(view.rows[3].operation, "get");
  const auto& mount = view.rows[0];
  EXPECT_DOUBLE_EQ(mount.rate, 10.0);
  EXPECT_DOUBLE_EQ(mount.error_rate, 1.0);
  // The interval's 20 requests all fell in (1 ms, 10 ms].
  EXPECT_DOUBLE_EQ(mount.p50, 0.0055);
  EXPECT_DOUBLE_EQ(mount.p99, 0.001 + 0.009 * 0.99);
  EXPECT_EQ(mount.total, 30u);
  const auto& stage = view.rows[1];
  EXPECT_DOUBLE_EQ(stage.rate, 3.0);
  EXPECT_DOUBLE_EQ(stage.p50, 0.0055);
  EXPECT_DOUBLE_EQ(view.rows[2].rate, 2.0);
  EXPECT_DOUBLE_EQ(view.rows[2].p50, 0.0005);
  const auto& get = view.rows[3];
  EXPECT_DOUBLE_EQ(get.rate, 0.0);
  EXPECT_TRUE(std::isnan(get.p50)) << "nothing answered in the interval";
  EXPECT_TRUE(std::isnan(get.p99));
  EXPECT_EQ(get.total, 7u);
}

TEST(compute_top, an_empty_interval_has_no_rates) {
  operations_sample s;
  s.monotonic_seconds = 5;
  s.operations = {op("docker", "mount", {{"ok", 2}}, hist(ms_bounds, {2, 2}, 2))};
  auto view = compute_top(s, s);
  ASSERT_EQ(view.rows.size(), 1u);
  EXPECT_DOUBLE_EQ(view.rows[0].rate, 0.0);
  operations_sample later = s;
  later.monotonic_seconds = 4; // clock readings out of order: no division by <= 0
  later.operations[0] = op("docker", "mount", {{"ok", 4}}, hist(ms_bounds, {4, 4}, 4));
  EXPECT_DOUBLE_EQ(compute_top(s, later).rows[0].rate, 0.0);
  EXPECT_TRUE(compute_top(operations_sample{}, operations_sample{}).rows.empty());
}

TEST(compute_top, ties_go_by_total_then_name) {
  operations_sample s;
  s.monotonic_seconds = 1;
  s.operations = {op("docker", "b", {{"ok", 1}}, hist(ms_bounds, {1, 1}, 1)),
                  op("docker", "a", {{"ok", 1}}, hist(ms_bounds, {1, 1}, 1)),
                  op("csi", "z", {{"ok", 5}}, hist(ms_bounds, {5, 5}, 5))};
  auto view = compute_top(s, s);
  ASSERT_EQ(view.rows.size(), 3u);
  EXPECT_EQ(view.rows[0].operation, "z");
  EXPECT_EQ(view.rows[1].operation, "a");
  EXPECT_EQ(view.rows[2].operation, "b");
}

// -- the screen and JSON ----------------------------------------------------------------

TEST(format_latency, picks_a_unit) {
  EXPECT_EQ(format_latency(std::numeric_limits<double>::quiet_NaN()), "-");
  EXPECT_EQ(format_latency(0), "0us");
  EXPECT_EQ(format_latency(87e-6), "87us");
  EXPECT_EQ(format_latency(0.0025), "2.50ms");
  EXPECT_EQ(format_latency(0.25), "250.0ms");
  EXPECT_EQ(format_latency(1.2), "1.20s");
}

namespace {

top_view two_rows() {
  top_view view;
  view.interval_seconds = 1;
  top_row mount;
  mount.protocol = "docker";
  mount.operation = "mount";
  mount.rate = 10;
  mount.error_rate = 1;
  mount.p50 = 0.0055;
  mount.p99 = 0.00991;
  mount.total = 30;
  top_row get;
  get.protocol = "docker";
  get.operation = "get";
  get.p50 = get.p99 = std::numeric_limits<double>::quiet_NaN();
  get.total = 7;
  view.rows = {mount, get};
  return view;
}

} // namespace

TEST(format_top, aligns_names_left_and_numbers_right) {
  EXPECT_EQ(format_top(two_rows(), "title", "status", 200, 50),
            "title\n"
            "status\n"
            "PROTOCOL  OPERATION  OPS/S  ERR/S     P50     P99  TOTAL\n"
            "docker    mount       10.0    1.0  5.50ms  9.91ms     30\n"
            "docker    get          0.0    0.0       -       -      7\n");
  EXPECT_EQ(format_top(top_view{}, "title", "", 200, 50),
            "title\n"
            "PROTOCOL  OPERATION  OPS/S  ERR/S  P50  P99  TOTAL\n"
            "(no operations answered yet)\n");
}

TEST(format_top, cuts_lines_to_the_width_and_rows_to_the_height) {
  EXPECT_EQ(format_top(two_rows(), "a long title", "", 8, 50),
            "a long t\nPROTOCOL\ndocker  \ndocker  \n");
  EXPECT_EQ(format_top(two_rows(), "title", "status", 200, 4),
            "title\n"
            "status\n"
            "PROTOCOL  OPERATION  OPS/S  ERR/S     P50     P99  TOTAL\n"
            "... 2 more line(s): enlarge the terminal\n");
}

TEST(top_json, writes_rates_and_null_for_no_quantile) {
  rapidjson::Document doc;
  auto text = top_json(two_rows());
  doc.Parse(text.c_str());
  ASSERT_FALSE(doc.HasParseError()) << text;
  EXPECT_DOUBLE_EQ(doc["interval_seconds"].GetDouble(), 1.0);
  ASSERT_EQ(doc["operations"].Size(), 2u);
  const auto& mount = doc["operations"][0];
  EXPECT_STREQ(mount["protocol"].GetString(), "docker");
  EXPECT_STREQ(mount["operation"].GetString(), "mount");
  EXPECT_DOUBLE_EQ(mount["rate_per_second"].GetDouble(), 10.0);
  EXPECT_DOUBLE_EQ(mount["errors_per_second"].GetDouble(), 1.0);
  EXPECT_DOUBLE_EQ(mount["p50_seconds"].GetDouble(), 0.0055);
  EXPECT_DOUBLE_EQ(mount["p99_seconds"].GetDouble(), 0.00991);
  EXPECT_EQ(mount["total"].GetUint64(), 30u);
  EXPECT_TRUE(doc["operations"][1]["p50_seconds"].IsNull());
  EXPECT_TRUE(doc["operations"][1]["p99_seconds"].IsNull());
}

// -- berthctl status's text ---------------------------------------------------------------

TEST(format_uptime, days_hours_minutes_seconds) {
  EXPECT_EQ(format_uptime(-3), "0s");
  EXPECT_EQ(format_uptime(45.9), "45s");
  EXPECT_EQ(format_uptime(192), "3m 12s");
  EXPECT_EQ(format_uptime(7500), "2h 5m");
  EXPECT_EQ(format_uptime(4 * 86400 + 3 * 3600 + 5), "4d 3h");
}

TEST(format_status, says_every_count_and_why_not_ready) {
  status_info s;
  s.version = "0.1.0";
  s.revision = "abc1234";
  s.started_at = "2026-12-01T12:00:00Z";
  s.uptime_seconds = 3725;
  s.ready = false;
  s.not_ready_reason = "2 volume(s) still reconciling with the host";
  s.volumes = 1;
  s.by_state = {{"idle", 1}, {"mounted", 0}, {"staged", 0}, {"published", 0}};
  s.snapshots = 0;
  s.mount_ids = 1;
  s.uncertain = 1;
  s.reconcile_pending = 2;
  s.journal_bytes = 0;
  EXPECT_EQ(format_status(s),
            "version:    berthd 0.1.0 (revision abc1234)\n"
            "uptime:     1h 2m (since 2026-12-01T12:00:00Z)\n"
            "ready:      no: 2 volume(s) still reconciling with the host\n"
            "volumes:    1 (1 idle, 0 mounted, 0 staged, 0 published); 0 snapshots\n"
            "mounts:     1 Docker mount ID; CSI 0 staged, 0 published\n"
            "uncertain:  1 volume with a hung backend call\n"
            "reconcile:  2 volumes still reconciling with the host\n"
            "journal:    0 bytes, 0 appends\n"
            "last fsync: - (none yet)\n");
}

TEST(parse_status, names_a_missing_or_mistyped_field) {
  auto s = parse_status(R"({"ready":true,"volumes":{"total":1,"by_state":{}}})");
  ASSERT_FALSE(s);
  EXPECT_EQ(describe(s.error()),
            "an unreadable /v1/status answer: \"version\" is missing or not a string");
  auto t = parse_status(R"({"ready":"yes"})");
  ASSERT_FALSE(t);
  EXPECT_EQ(describe(t.error()),
            "an unreadable /v1/status answer: \"ready\" is missing or not true or false");
  EXPECT_FALSE(parse_status("[]"));
}
