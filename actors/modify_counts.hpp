#pragma once

// What the coalescing mailboxes of all volumes did, counted where the metrics
// endpoint can read it without asking an actor:
//   berth_modify_requests_total{result}      <- requests
//   berth_modify_backend_calls_total{backend} <- backend_calls

#include <cstdint>
#include <map>
#include <mutex>
#include <string>

namespace berth {

/// Counters by label, safe to bump from any actor and read from any thread.
class labelled_counter {
public:
  void add(const std::string& label, uint64_t n = 1) {
    std::lock_guard<std::mutex> guard{mtx_};
    counts_[label] += n;
  }

  uint64_t get(const std::string& label) const {
    std::lock_guard<std::mutex> guard{mtx_};
    auto it = counts_.find(label);
    return it == counts_.end() ? 0 : it->second;
  }

  std::map<std::string, uint64_t> snapshot() const {
    std::lock_guard<std::mutex> guard{mtx_};
    return counts_;
  }

private:
  mutable std::mutex mtx_;
  std::map<std::string, uint64_t> counts_;
};

/// The labels of modify_counts::requests. Every expand or modify request counts
/// once as `received` and once more as what happened to it.
namespace modify_result {
inline constexpr const char* received = "received";   ///< every request
inline constexpr const char* merged = "merged";       ///< joined a window another request opened
inline constexpr const char* satisfied = "satisfied"; ///< already true: no window, no call
inline constexpr const char* applied = "applied";     ///< its backend call succeeded
inline constexpr const char* failed = "failed";       ///< its backend call (or the persist) failed
inline constexpr const char* refused_shrink = "refused_shrink";
inline constexpr const char* refused_invalid = "refused_invalid";   ///< unknown or immutable key, bad value
inline constexpr const char* refused_conflict = "refused_conflict"; ///< a second value in the window
inline constexpr const char* refused_state = "refused_state"; ///< no such volume, another owner, hung
} // namespace modify_result

struct modify_counts {
  labelled_counter requests;      ///< by modify_result label
  labelled_counter backend_calls; ///< by backend name
};

} // namespace berth
