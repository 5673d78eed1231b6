// The test-only hold point: berthd waits at a named start-up step while a file exists.

#include "core/crash_point.hpp"

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <thread>

#include <gtest/gtest.h>

#include "tests/persistence/temp_dir.hpp"

namespace berth {
namespace {

struct hold_env {
  explicit hold_env(const std::string& value) {
    ::setenv("BERTH_TEST_HOLD_AT", value.c_str(), 1);
  }
  ~hold_env() {
    ::unsetenv("BERTH_TEST_HOLD_AT");
  }
};

TEST(test_hold_point, waits_while_the_file_exists_at_its_step_only) {
  test::temp_dir dir;
  auto file = dir.path() + "/hold";
  std::ofstream{file} << "x";
  hold_env env{"start-loading:" + file};
  test_hold_point("start-compacted"); // another step: returns at once
  std::atomic<bool> released{false};
  std::thread held{[&] {
    test_hold_point("start-loading");
    released = true;
  }};
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  EXPECT_FALSE(released.load()) << "returned while " << file << " exists";
  std::remove(file.c_str());
  held.join();
  EXPECT_TRUE(released.load());
}

TEST(test_hold_point, does_nothing_unset_or_without_a_file) {
  ::unsetenv("BERTH_TEST_HOLD_AT");
  test_hold_point("start-loading");
  hold_env env{"start-loading"};
  test_hold_point("start-loading");
  hold_env env2{"start-loading:/nonexistent/hold"};
  test_hold_point("start-loading");
  SUCCEED();
}

} // namespace
} // namespace berth
