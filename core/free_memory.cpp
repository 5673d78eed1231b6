#include "core/free_memory.hpp"

#include <malloc.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <string>

// jemalloc's control call: defined when the program links jemalloc (berthd does), null
// otherwise. A weak reference, so core links against neither allocator, and the tests and
// the sanitizer builds (which keep glibc's, or the sanitizer's) run the same code.
extern "C" int mallctl(const char* name, void* oldp, size_t* oldlenp, void* newp, size_t newlen)
  __attribute__((weak));

namespace berth {

namespace {

// The steady clock's count at the last trim; the minimum means never.
std::atomic<int64_t> last_trim{INT64_MIN};

// "arena.<MALLCTL_ARENAS_ALL>.purge" (MALLCTL_ARENAS_ALL is 4096 in jemalloc 5): every
// arena's unused dirty pages go back to the kernel at once, not after their decay time.
constexpr const char* jemalloc_purge_all = "arena.4096.purge";

void give_pages_back() {
  if (mallctl != nullptr) {
    mallctl(jemalloc_purge_all, nullptr, nullptr, nullptr, 0);
  } else {
    ::malloc_trim(0);
  }
}

} // namespace

const char* allocator_name() {
  if (mallctl == nullptr) {
    return "glibc malloc";
  }
  static const char* const name = [] {
    const char* version = nullptr;
    size_t len = sizeof(version);
    if (mallctl("version", &version, &len, nullptr, 0) != 0 || version == nullptr) {
      return "jemalloc";
    }
    static const std::string text = std::string{"jemalloc "} + version;
    return text.c_str();
  }();
  return name;
}

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
  give_pages_back();
  return true;
}

bool release_free_memory() {
  return release_free_memory(std::chrono::steady_clock::now());
}

} // namespace berth
