#pragma once

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <sys/mount.h>
#include <time.h>
#include <unistd.h>

#include "backends/mountinfo.hpp"

namespace berth::test {

/// Lazily unmounts every mount below `dir`, deepest first, until none is left (a few
/// rounds: a lazy unmount can uncover another mount at the same point).
inline void unmount_below(const std::string& dir) {
  for (int round = 0; round < 8; ++round) {
    auto points = read_mount_points();
    if (!points) {
      break;
    }
    std::vector<std::string> mine;
    for (const auto& p : *points) {
      if (p.compare(0, dir.size() + 1, dir + "/") == 0) {
        mine.push_back(p);
      }
    }
    if (mine.empty()) {
      break;
    }
    std::sort(mine.begin(), mine.end(),
              [](const std::string& a, const std::string& b) { return a.size() > b.size(); });
    for (const auto& p : mine) {
      ::umount2(p.c_str(), MNT_DETACH);
    }
  }
}

/// A fresh state dir under /tmp; unmounts everything below it and deletes it.
class temp_state {
public:
  temp_state() {
    char tmpl[] = "/tmp/berth-backends-XXXXXX";
    const char* dir = ::mkdtemp(tmpl);
    path_ = dir != nullptr ? dir : "";
  }
  ~temp_state() {
    cleanup();
  }
  temp_state(const temp_state&) = delete;
  temp_state& operator=(const temp_state&) = delete;

  const std::string& path() const {
    return path_;
  }

  /// Lazily unmounts every mount at or below the dir (deepest first), then removes it.
  void cleanup() {
    if (path_.empty()) {
      return;
    }
    unmount_below(path_);
    std::error_code err;
    std::filesystem::remove_all(path_, err);
    path_.clear();
  }

private:
  std::string path_;
};

/// CPU time of the calling thread in microseconds: unlike wall time, it does
/// not grow when other processes load the machine.
inline long long thread_cpu_us() {
  timespec ts{};
  ::clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<long long>(ts.tv_sec) * 1000000 + ts.tv_nsec / 1000;
}

/// True when running as root; otherwise the caller should GTEST_SKIP().
inline bool is_root() {
  return ::geteuid() == 0;
}

} // namespace berth::test

#define BERTH_REQUIRE_ROOT()                                                                    \
  do {                                                                                          \
    if (!::berth::test::is_root()) {                                                            \
      GTEST_SKIP() << "SKIPPED: this test makes real mounts and needs root (geteuid() != 0)";   \
    }                                                                                           \
  } while (false)
