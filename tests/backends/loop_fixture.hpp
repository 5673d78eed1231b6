#pragma once

// What the tests of real loop devices share: a sparse image in a temp dir, and a fixture
// that skips loudly without root or /dev/loop-control and detaches what it attached.

#include <filesystem>
#include <iostream>
#include <string>

#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include "backends/loop_device.hpp"
#include "temp_state.hpp"

namespace berth::loop_test {

/// A sparse file of `size` bytes named `name` in `dir`; its path.
inline std::string make_image(const std::string& dir, const std::string& name, off_t size) {
  std::string path = dir + "/" + name;
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  EXPECT_GE(fd, 0);
  EXPECT_EQ(::ftruncate(fd, size), 0);
  ::close(fd);
  return path;
}

/// Detaches every loop device whose backing file lies under `dir`.
inline void detach_loops_under(const std::string& dir) {
  for (const auto& [device, backing] : list_loop_devices()) {
    if (backing.compare(0, dir.size() + 1, dir + "/") == 0) {
      detach_loop_device(device);
    }
  }
}

/// A temp dir (dir_) for images; every loop device backed below it is detached after.
class loop_fixture : public ::testing::Test {
protected:
  void SetUp() override {
    const char* why = nullptr;
    if (!test::is_root()) {
      why = "needs root";
    } else if (::access("/dev/loop-control", R_OK | W_OK) != 0) {
      why = "needs /dev/loop-control";
    }
    if (why != nullptr) {
      std::cerr << "\n***** SKIPPED: loop device tests " << why << " *****\n\n";
      GTEST_SKIP() << "SKIPPED: loop device tests " << why;
    }
    ASSERT_FALSE(state_.path().empty());
    dir_ = std::filesystem::canonical(state_.path()).string();
  }
  void TearDown() override {
    if (!dir_.empty()) {
      detach_loops_under(dir_);
    }
    state_.cleanup();
  }

  test::temp_state state_;
  std::string dir_;
};

} // namespace berth::loop_test
