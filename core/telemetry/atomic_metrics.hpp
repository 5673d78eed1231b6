#pragma once

// Counters for the hot path: no lock, no registry. A thread that counts does one or two
// relaxed atomic operations; a scrape reads them with snapshot() and hands the result to
// the writer (exposition.hpp). Header-only, so the volume core can count without
// linking the writer.
//
// Relaxed order is enough: each value is a sum, nobody orders other memory by it, and a
// scrape that races an observe() sees it either wholly in a bucket or not yet (the count
// is the buckets' total, so buckets, +Inf and _count always agree; _sum may lead or lag
// them by the observations in flight).

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdint>
#include <memory>
#include <utility>
#include <vector>

#include "core/telemetry/metric_families.hpp"

namespace berth::metrics {

static_assert(std::atomic<uint64_t>::is_always_lock_free, "counters must not take a lock");
static_assert(std::atomic<double>::is_always_lock_free, "histogram sums must not take a lock");

/// A monotonic counter. Aligned to a cache line so two hot counters never share one.
class alignas(64) atomic_counter {
public:
  /// Adds `n`; safe from any thread.
  void add(uint64_t n = 1) noexcept {
    value_.fetch_add(n, std::memory_order_relaxed);
  }

  /// The current total.
  uint64_t value() const noexcept {
    return value_.load(std::memory_order_relaxed);
  }

private:
  std::atomic<uint64_t> value_{0};
};

/// A histogram with fixed bucket bounds. observe() is one relaxed add on its bucket and
/// one compare-exchange loop on the sum.
class atomic_histogram {
public:
  /// @pre `upper_bounds` finite and strictly increasing (the writer refuses the
  ///      snapshot of a histogram built otherwise, naming the family); `+Inf` is implied.
  explicit atomic_histogram(std::vector<double> upper_bounds)
    : bounds_(std::move(upper_bounds)),
      buckets_(std::make_unique<std::atomic<uint64_t>[]>(bounds_.size() + 1)) {
  }

  atomic_histogram(const atomic_histogram&) = delete;
  atomic_histogram& operator=(const atomic_histogram&) = delete;

  /// Counts `v` in the first bucket whose bound is >= v (the `+Inf` bucket past the
  /// last bound, and for NaN, as Prometheus's Go client does) and adds it to the sum.
  void observe(double v) noexcept {
    auto index = std::isnan(v) ? bounds_.size()
                               : static_cast<size_t>(std::lower_bound(bounds_.begin(),
                                                                      bounds_.end(), v)
                                                     - bounds_.begin());
    buckets_[index].fetch_add(1, std::memory_order_relaxed);
    auto sum = sum_.load(std::memory_order_relaxed);
    while (!sum_.compare_exchange_weak(sum, sum + v, std::memory_order_relaxed,
                                       std::memory_order_relaxed)) {
    }
  }

  /// The bounds given at construction.
  const std::vector<double>& upper_bounds() const noexcept {
    return bounds_;
  }

  /// The current state, cumulative, ready for a histogram_series.
  histogram_data snapshot() const {
    std::vector<uint64_t> per_bucket(bounds_.size() + 1);
    for (size_t i = 0; i < per_bucket.size(); ++i) {
      per_bucket[i] = buckets_[i].load(std::memory_order_relaxed);
    }
    auto running = cumulative(per_bucket);
    histogram_data out;
    out.upper_bounds = bounds_;
    out.count = running.back();
    running.pop_back();
    out.cumulative_counts = std::move(running);
    out.sum = sum_.load(std::memory_order_relaxed);
    return out;
  }

private:
  const std::vector<double> bounds_;
  std::unique_ptr<std::atomic<uint64_t>[]> buckets_; ///< per bucket; the last is `+Inf`
  std::atomic<double> sum_{0};
};

} // namespace berth::metrics
