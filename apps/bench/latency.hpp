#pragma once

// Latency samples and their percentiles, for berth-bench.

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstddef>
#include <vector>

namespace berth::bench {

using bench_clock = std::chrono::steady_clock;

/// Milliseconds between two instants, as a double.
inline double elapsed_ms(bench_clock::time_point from, bench_clock::time_point to) {
  return std::chrono::duration<double, std::milli>(to - from).count();
}

/// Samples of one operation (milliseconds). One recorder per thread; merge at the end.
class latency_recorder {
public:
  void add(double ms) {
    samples_.push_back(ms);
  }

  void reserve(size_t n) {
    samples_.reserve(n);
  }

  void merge(const latency_recorder& other) {
    samples_.insert(samples_.end(), other.samples_.begin(), other.samples_.end());
    sorted_ = false;
  }

  size_t count() const {
    return samples_.size();
  }

  /// Nearest-rank percentile, `p` in [0, 100]; 0 when there are no samples.
  double percentile(double p) {
    if (samples_.empty()) {
      return 0.0;
    }
    sort();
    if (p <= 0.0) {
      return samples_.front();
    }
    auto rank = static_cast<size_t>(std::ceil(p / 100.0 * static_cast<double>(samples_.size())));
    rank = std::clamp<size_t>(rank, 1, samples_.size());
    return samples_[rank - 1];
  }

  double max() {
    return percentile(100.0);
  }

  double mean() const {
    if (samples_.empty()) {
      return 0.0;
    }
    double sum = 0.0;
    for (double s : samples_) {
      sum += s;
    }
    return sum / static_cast<double>(samples_.size());
  }

private:
  void sort() {
    if (!sorted_) {
      std::sort(samples_.begin(), samples_.end());
      sorted_ = true;
    }
  }

  std::vector<double> samples_;
  bool sorted_ = false;
};

} // namespace berth::bench
