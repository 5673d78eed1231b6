#include "protocols/kube/agent/capacity_report.hpp"

#include <algorithm>

namespace berth::kube::agent {

bool meaningful_change(const capacity_by_backend& before, const capacity_by_backend& now,
                       const capacity_rule& rule) {
  if (before.size() != now.size()) {
    return true;
  }
  for (const auto& [backend, bytes] : now) {
    auto it = before.find(backend);
    if (it == before.end()) {
      return true;
    }
    auto old = it->second;
    if ((old == 0) != (bytes == 0)) {
      return true; // ran out, or has room again: placement must hear of it
    }
    auto moved = old > bytes ? old - bytes : bytes - old;
    auto step = std::max(rule.min_change_bytes, old / 100 * rule.percent);
    if (moved >= step) {
      return true;
    }
  }
  return false;
}

bool capacity_report::due(const capacity_by_backend& measured, clock::time_point at,
                          bool force) const {
  if (force || !last_) {
    return true;
  }
  return meaningful_change(*last_, measured, rule_) && at - last_at_ >= rule_.interval;
}

void capacity_report::written(capacity_by_backend value, clock::time_point at) {
  last_ = std::move(value);
  last_at_ = at;
}

} // namespace berth::kube::agent
