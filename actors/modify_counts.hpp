#pragma once

// What the coalescing mailboxes of all volumes did, counted where the metrics
// endpoint can read it without asking an actor:
//   berth_modify_requests_total{result}      <- requests
//   berth_modify_backend_calls_total{backend} <- backend_calls

#include <cstdint>
#include <map>
#include <mutex>
#include <string>

#include "telemetry/telemetry.hpp" // modify_result

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


struct modify_counts {
  labelled_counter requests;      ///< by modify_result label
  labelled_counter backend_calls; ///< by backend name
};

} // namespace berth
