#pragma once

// Lock-free tables of counters and histograms whose label values are fixed when the
// table is built: after construction nothing inserts, so any thread reads and counts
// without a lock (a lookup is a binary search over the keys; a count is one relaxed
// atomic add). A value the table was not built with is counted under "other", so a
// forgotten name shows up on the dashboard instead of vanishing.

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/telemetry/atomic_metrics.hpp"

namespace berth {

/// The label value that catches every value a table was not built with.
inline constexpr const char* other_label = "other";

/// A gauge: an integer that goes up and down, safe from any thread.
class alignas(64) atomic_gauge {
public:
  void add(int64_t n) noexcept {
    value_.fetch_add(n, std::memory_order_relaxed);
  }
  void set(int64_t n) noexcept {
    value_.store(n, std::memory_order_relaxed);
  }
  int64_t value() const noexcept {
    return value_.load(std::memory_order_relaxed);
  }

private:
  std::atomic<int64_t> value_{0};
};

/// Counters by one label value, fixed at construction (plus "other").
class counter_table {
public:
  /// @param keys the label values; duplicates are dropped, "other" is added.
  explicit counter_table(std::vector<std::string> keys);

  /// Adds `n` to `key`'s counter, or to "other" when `key` is not one of the keys.
  void add(std::string_view key, uint64_t n = 1) noexcept;

  /// The count of `key` ("other" for an unknown key).
  uint64_t value(std::string_view key) const noexcept;

  /// Every key with its count, zeros included, sorted by key.
  std::vector<std::pair<std::string, uint64_t>> snapshot() const;

private:
  std::vector<std::string> keys_; ///< sorted, unique, holds "other"
  std::unique_ptr<metrics::atomic_counter[]> counts_;
  size_t other_ = 0;
};

/// A pair of label values, e.g. (protocol, operation) or (backend, call).
using label_pair = std::pair<std::string, std::string>;

/// Histograms by a pair of label values fixed at construction. A first value
/// unknown to the table, or a second one unknown for that first, is counted under
/// (first or "other", "other").
class histogram_table {
public:
  /// @param keys every pair that has its own histogram.
  /// @param upper_bounds the buckets of every histogram of the table.
  histogram_table(std::vector<label_pair> keys, const std::vector<double>& upper_bounds);

  /// The histogram of (a, b), or of the "other" row standing in for it.
  metrics::atomic_histogram& at(std::string_view a, std::string_view b) noexcept;

  /// The position of (a, b) (or its stand-in) in keys(); parallel tables use it.
  size_t index_of(std::string_view a, std::string_view b) const noexcept;

  /// Every row's key, sorted; index_of() points into it.
  const std::vector<label_pair>& keys() const noexcept {
    return keys_;
  }

  /// The histogram of row `i` of keys().
  const metrics::atomic_histogram& row(size_t i) const noexcept {
    return *rows_[i];
  }
  metrics::atomic_histogram& row(size_t i) noexcept {
    return *rows_[i];
  }

private:
  std::vector<label_pair> keys_; ///< sorted, unique; holds (a, "other") per a and ("other", "other")
  std::vector<std::unique_ptr<metrics::atomic_histogram>> rows_;
};

} // namespace berth
