#pragma once

// What the exposition writer renders: plain values the caller builds (no registry).
// A family is a name, its HELP text, its type and its series; a series is a label set
// and a value, or for a histogram its buckets, sum and count. The writer
// (exposition.hpp) validates and orders them; nothing here checks anything.

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace berth::metrics {

/// The metric types berth exposes (text format 0.0.4 `# TYPE` values).
enum class metric_type : uint8_t {
  counter,   ///< only goes up (resets at restart); names end in `_total`
  gauge,     ///< goes up and down
  histogram, ///< observations counted in cumulative buckets, with their sum and count
};

/// Returns the `# TYPE` spelling: "counter", "gauge" or "histogram".
inline const char* to_string(metric_type type) {
  switch (type) {
    case metric_type::counter: return "counter";
    case metric_type::gauge: return "gauge";
    case metric_type::histogram: return "histogram";
  }
  return "untyped";
}

/// One label: name and value. A label set is a list of them in any order; the writer
/// sorts it by name and refuses a name given twice.
using label = std::pair<std::string, std::string>;
using label_set = std::vector<label>;

/// One series of a counter or gauge.
struct series {
  label_set labels;
  double value = 0;
};

/// One histogram's state in the shape of the exposition format.
struct histogram_data {
  /// Finite, strictly increasing upper bounds (inclusive: `le`); the `+Inf` bucket is
  /// implied and not listed here.
  std::vector<double> upper_bounds;
  /// Observations <= upper_bounds[i], one per bound: non-decreasing, each <= count.
  std::vector<uint64_t> cumulative_counts;
  double sum = 0;     ///< the sum of all observations
  uint64_t count = 0; ///< all observations: the `+Inf` bucket
};

/// One series of a histogram.
struct histogram_series {
  label_set labels;
  histogram_data data;
};

/// One metric family: `# HELP` and `# TYPE` once, then its series.
struct family {
  std::string name; ///< [a-zA-Z_:][a-zA-Z0-9_:]*
  std::string help; ///< non-empty UTF-8 text: what it measures and in which unit
  metric_type type = metric_type::gauge;
  std::vector<series> values;               ///< counter and gauge series (empty for a histogram)
  std::vector<histogram_series> histograms; ///< histogram series (empty otherwise)
};

/// Turns per-bucket counts (observations in each bucket alone) into cumulative ones
/// (observations in that bucket and every lower one): {2, 0, 3} -> {2, 2, 5}.
inline std::vector<uint64_t> cumulative(const std::vector<uint64_t>& per_bucket) {
  std::vector<uint64_t> out;
  out.reserve(per_bucket.size());
  uint64_t running = 0;
  for (auto n : per_bucket) {
    running += n;
    out.push_back(running);
  }
  return out;
}

} // namespace berth::metrics
