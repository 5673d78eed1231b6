#pragma once

// What `berthctl top` shows, without a terminal: two samples of GET /v1/operations
// become, per (protocol, operation), the rate and the latency quantiles of the interval
// between them. Pure functions, so the arithmetic and the screen text are unit-tested.

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include <caf/expected.hpp>

#include "core/telemetry/metric_families.hpp"

namespace berth::cli {

/// The q-quantile (0 <= q <= 1) of the observations in a cumulative histogram, as
/// Prometheus's histogram_quantile() estimates it: find the bucket holding the rank
/// q * count and interpolate linearly between its lower bound (0 for the first bucket)
/// and its upper bound. A rank in the +Inf bucket gives the highest finite bound.
/// NaN when there is no observation, no finite bound, or the buckets do not fit
/// (cumulative_counts not one per bound); -Inf for q < 0 and +Inf for q > 1. A
/// decreasing count (a torn read) is treated as the count before it, like Prometheus.
/// One deviation: q = 0 gives the lower bound of the first bucket holding an
/// observation (Prometheus gives NaN when the first bucket is empty).
double histogram_quantile(double q, const metrics::histogram_data& h);

/// One (protocol, operation) of a /v1/operations sample.
struct operation_sample {
  std::string protocol;
  std::string operation;
  uint64_t count = 0;
  std::map<std::string, uint64_t> codes; ///< code_of() name -> count
  metrics::histogram_data duration;
};

/// One GET /v1/operations answer.
struct operations_sample {
  double monotonic_seconds = 0;
  std::vector<operation_sample> operations;
};

/// Reads a GET /v1/operations body; an error (ec::invalid_argument) names what is wrong.
caf::expected<operations_sample> parse_operations(std::string_view json);

/// One line of the view: what happened between two samples.
struct top_row {
  std::string protocol;
  std::string operation;
  double rate = 0;        ///< requests per second
  double error_rate = 0;  ///< requests per second whose code is not "ok"
  double p50 = 0;         ///< seconds; NaN when nothing was answered in the interval
  double p99 = 0;         ///< seconds; NaN likewise
  uint64_t total = 0;     ///< requests since berthd started
};

/// The view of one interval.
struct top_view {
  double interval_seconds = 0;
  std::vector<top_row> rows; ///< by rate, highest first; then by total, then by name
};

/// The view between `before` and `after` (taken later). An operation missing from
/// `before` starts from zero; one whose counts went down (berthd restarted between the
/// samples) counts from zero too. An interval of 0 or less gives rates of 0.
top_view compute_top(const operations_sample& before, const operations_sample& after);

/// A latency for people: "87us", "2.5ms", "1.20s"; "-" for NaN.
std::string format_latency(double seconds);

/// The screen: `title`, `status` (a line such as an error; none when empty), the column
/// header and one line per row, each cut to `width` columns, at most `height` lines (the
/// last then says how many rows did not fit). Lines end in "\n".
std::string format_top(const top_view& view, std::string_view title, std::string_view status,
                       size_t width, size_t height);

/// The view as JSON (berthctl top --json): {"interval_seconds", "operations": [{"protocol",
/// "operation", "rate_per_second", "errors_per_second", "p50_seconds", "p99_seconds",
/// "total"}]}, a quantile null when NaN.
std::string top_json(const top_view& view);

} // namespace berth::cli
