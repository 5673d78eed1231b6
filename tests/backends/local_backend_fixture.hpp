#pragma once

// What the local backend's tests share: a backend on a fresh state dir (root only), and
// short ways to build a record and to read mountinfo and files.

#include <filesystem>
#include <fstream>
#include <iterator>
#include <memory>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "backends/local_backend.hpp"
#include "backends/mountinfo.hpp"
#include "core/errors.hpp"
#include "tests/backends/temp_state.hpp"

namespace berth::test {

inline volume_record make_record(const std::string& name, option_map options = {}) {
  volume_record rec;
  rec.name = name;
  rec.options = std::move(options);
  return rec;
}

/// How many mounts /proc/self/mountinfo lists at `point`.
inline size_t mounts_at(const std::string& point) {
  auto entries = read_mountinfo();
  EXPECT_TRUE(entries);
  size_t n = 0;
  for (const auto& e : entries ? *entries : std::vector<mount_entry>{}) {
    n += e.mount_point == point ? 1 : 0;
  }
  return n;
}

inline const mount_entry* find_mount(const std::vector<mount_entry>& entries,
                                     const std::string& point) {
  for (const auto& e : entries) {
    if (e.mount_point == point) {
      return &e;
    }
  }
  return nullptr;
}

inline std::string read_text(const std::filesystem::path& p) {
  std::ifstream in(p);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

inline ec code_of(const caf::error& err) {
  return static_cast<ec>(err.code());
}

class local_backend_test : public ::testing::Test {
protected:
  void SetUp() override {
    BERTH_REQUIRE_ROOT();
    ASSERT_FALSE(state_.path().empty());
    backend_ = std::make_unique<local_backend>(state_.path());
  }
  void TearDown() override {
    state_.cleanup();
  }

  temp_state state_;
  std::unique_ptr<local_backend> backend_;
};

} // namespace berth::test
