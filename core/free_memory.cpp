#include "core/free_memory.hpp"

#include <malloc.h>

#include <atomic>
#include <cstdint>

namespace berth {

namespace {

// The steady clock's count at the last trim; the minimum means never.
std::atomic<int64_t> last_trim{INT64_MIN};

} // namespace

bool release_free_memory(std::chrono::steady_clock::time_point now) {
  const int64_t at = now.time_since_epoch().count();
  const int64_t gap =
    std::chrono::duration_cast<std::chrono::steady_clock::duration>(free_memory_min_interval)
      .count();
  int64_t last = last_trim.load(std::memory_order_relaxed);
  // Only the caller that moves last_trim trims; the others see it moved and return. A time
  // before the last trim (read before another caller trimmed) does not count as recent.
  if ((last != INT64_MIN && at >= last && at - last < gap) ||
      !last_trim.compare_exchange_strong(last, at, std::memory_order_relaxed)) {
    return false;
  }
  ::malloc_trim(0);
  return true;
}

bool release_free_memory() {
  return release_free_memory(std::chrono::steady_clock::now());
}

} // namespace berth
