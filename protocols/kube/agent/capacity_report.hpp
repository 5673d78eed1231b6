#pragma once

// When a node writes its free capacity into its Node's annotations (docs/running.md,
// "Capacity"): a Node patch per volume change is load on the API server for nothing, on a
// cluster of many nodes, since the free bytes of the filesystem that holds the images move
// a little with every write to it. Pure: the clock is the caller's.

#include <chrono>
#include <cstdint>
#include <map>
#include <optional>
#include <string>

namespace berth::kube::agent {

/// Free bytes by backend, as the Node's annotations carry them.
using capacity_by_backend = std::map<std::string, uint64_t>;

struct capacity_rule {
  /// At most one write in this long, but for a forced one.
  std::chrono::milliseconds interval{5000};
  /// A change smaller than this many bytes, and than `percent` of the last value written,
  /// is not worth a write of its own.
  uint64_t min_change_bytes = 64ull << 20;
  unsigned percent = 1;
};

/// True when `now` differs from `before` enough to be written: a backend came or went, one
/// ran out or has room again, or one moved by at least the rule's bytes or percent.
bool meaningful_change(const capacity_by_backend& before, const capacity_by_backend& now,
                       const capacity_rule& rule);

/// What was written last, and when; whether a measurement is due to be written.
class capacity_report {
public:
  using clock = std::chrono::steady_clock;

  explicit capacity_report(capacity_rule rule) : rule_(rule) {
  }

  /// Whether to write `measured` at `at`: always when `force` (the first full LIST, and each
  /// resync, which also heals an annotation someone removed); else when it differs
  /// meaningfully from the last value written and the last write is `interval` old.
  bool due(const capacity_by_backend& measured, clock::time_point at, bool force) const;

  /// `value` was written at `at`.
  void written(capacity_by_backend value, clock::time_point at);

  const capacity_rule& rule() const {
    return rule_;
  }

private:
  capacity_rule rule_;
  std::optional<capacity_by_backend> last_;
  clock::time_point last_at_{};
};

} // namespace berth::kube::agent
