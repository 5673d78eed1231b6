#pragma once

// How many times each volume has been mounted (or staged) since berthd started. A copy
// of a volume reads the count before and after it: a count that moved means a writer may
// have had the volume during the copy, even one that came and went between two looks at
// mountinfo (docs/running.md, "What consistent means").

#include <cstdint>
#include <map>
#include <mutex>
#include <string>

namespace berth {

class mount_counter {
public:
  /// One more mount of `volume`: called after each mount succeeded.
  void count(const std::string& volume) {
    std::lock_guard<std::mutex> lock(mu_);
    ++counts_[volume];
  }

  /// The mounts of `volume` so far.
  uint64_t of(const std::string& volume) const {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = counts_.find(volume);
    return it == counts_.end() ? 0 : it->second;
  }

private:
  mutable std::mutex mu_;
  std::map<std::string, uint64_t> counts_; ///< in memory only: a copy lives within one run
};

} // namespace berth
