#include "core/free_memory.hpp"

#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include <gtest/gtest.h>

using namespace berth;
using namespace std::chrono_literals;

namespace {

/// Resident bytes of this process (/proc/self/statm, field 2, in pages).
int64_t resident_bytes() {
  std::ifstream in{"/proc/self/statm"};
  int64_t size = 0;
  int64_t resident = 0;
  in >> size >> resident;
  return resident * ::sysconf(_SC_PAGESIZE);
}

} // namespace

// The shape of a List's burst: many small allocations (below glibc's mmap threshold, so from
// the arena), all freed but one at the end, which keeps free() from shrinking the heap's top.
// glibc keeps the freed pages, and jemalloc keeps them for its decay time (10 s); only a trim
// returns them at once. core_jemalloc_test runs this on jemalloc, core_test on glibc.
TEST(free_memory, a_trim_returns_the_pages_of_a_freed_burst) {
#if defined(__SANITIZE_ADDRESS__)
  GTEST_SKIP() << "ASan replaces glibc's allocator, whose kept pages this test measures";
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
  GTEST_SKIP() << "ASan replaces glibc's allocator, whose kept pages this test measures";
#endif
#endif
  constexpr size_t chunk = 512;
  constexpr size_t count = (64u << 20) / chunk; // 64 MiB
  std::vector<std::unique_ptr<char[]>> burst;
  burst.reserve(count);
  for (size_t i = 0; i < count; ++i) {
    burst.emplace_back(new char[chunk]);
    burst.back()[0] = 1; // touched, so resident
  }
  auto last = std::move(burst.back());
  burst.pop_back();
  burst.clear();
  burst.shrink_to_fit();
  const int64_t before = resident_bytes();

  ASSERT_TRUE(release_free_memory(std::chrono::steady_clock::now() + 24h));
  const int64_t after = resident_bytes();
  EXPECT_GT(before - after, int64_t{32} << 20)
    << "resident before the trim " << before << " bytes, after " << after;
  last.reset();
}

TEST(free_memory, names_the_allocator_the_program_runs_on) {
#if defined(BERTH_TEST_JEMALLOC)
  EXPECT_EQ(std::string{allocator_name()}.rfind("jemalloc ", 0), 0u) << allocator_name();
#else
  EXPECT_STREQ(allocator_name(), "glibc malloc");
#endif
}

TEST(free_memory, trims_at_most_once_per_interval) {
  // Far from the other test's times, so the order of the tests does not matter.
  const auto t0 = std::chrono::steady_clock::now() + 100 * 24h;
  EXPECT_TRUE(release_free_memory(t0));
  EXPECT_FALSE(release_free_memory(t0 + free_memory_min_interval / 2));
  EXPECT_FALSE(release_free_memory(t0 + free_memory_min_interval - 1ms));
  EXPECT_TRUE(release_free_memory(t0 + free_memory_min_interval));
}
