#include "backends/stall_backend.hpp"

#include <chrono>

#include <gtest/gtest.h>

#include "backends/local_backend.hpp"
#include "temp_state.hpp"

using namespace std::chrono_literals;

namespace berth {
namespace {

template <class F>
std::chrono::milliseconds time_of(F f) {
  auto start = std::chrono::steady_clock::now();
  f();
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now()
                                                               - start);
}

TEST(stall_backend, delays_only_its_volume) {
  BERTH_REQUIRE_ROOT();
  test::temp_state state;
  stall_backend b(std::make_unique<local_backend>(state.path()), {"slow"}, 200ms);
  EXPECT_EQ(b.name(), "local");
  volume_record slow{};
  slow.name = "slow";
  volume_record fast{};
  fast.name = "fast";
  ASSERT_FALSE(b.create(slow));
  ASSERT_FALSE(b.create(fast));
  ASSERT_TRUE(b.mount(fast));
  ASSERT_FALSE(b.unmount(fast, false));
  auto slow_mount = time_of([&] { ASSERT_TRUE(b.mount(slow)); });
  auto slow_unmount = time_of([&] { ASSERT_FALSE(b.unmount(slow, false)); });
  // Whether a call stalled is read from the backend itself: how long a real mount
  // takes on a loaded machine is no evidence either way.
  EXPECT_EQ(b.stalled("fast"), 0) << "the other volume's calls never stall";
  EXPECT_EQ(b.stalled("slow"), 2) << "its mount and its unmount stalled";
  EXPECT_GE(slow_mount, 200ms);
  EXPECT_GE(slow_unmount, 200ms);
  EXPECT_EQ(b.mountpoint(fast), state.path() + "/volumes/fast/mnt");
}

} // namespace
} // namespace berth
