#include "core/crash_point.hpp"

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <unistd.h>

#include <spdlog/spdlog.h>

namespace berth {

void test_crash_point(const char* step) {
  const char* env = std::getenv("BERTH_TEST_CRASH_AT");
  if (env == nullptr || *env == '\0') {
    return;
  }
  std::string want = env;
  unsigned long nth = 1;
  if (auto hash = want.find('#'); hash != std::string::npos) {
    nth = std::strtoul(want.c_str() + hash + 1, nullptr, 10);
    want.resize(hash);
  }
  if (want != step) {
    return;
  }
  static std::mutex mtx;
  static std::map<std::string, unsigned long> reached;
  std::lock_guard<std::mutex> guard{mtx};
  if (++reached[want] != nth) {
    return;
  }
  spdlog::critical("TEST ONLY: BERTH_TEST_CRASH_AT={}: crashing at step {}", env, step);
  spdlog::default_logger()->flush();
  std::fflush(nullptr);
  ::_exit(137);
}

void test_hold_point(const char* step) {
  const char* env = std::getenv("BERTH_TEST_HOLD_AT");
  if (env == nullptr || *env == '\0') {
    return;
  }
  std::string value = env;
  auto colon = value.find(':');
  if (colon == std::string::npos || value.compare(0, colon, step) != 0 || colon + 1 == value.size()) {
    return;
  }
  auto file = value.substr(colon + 1);
  spdlog::warn("TEST ONLY: BERTH_TEST_HOLD_AT={}: holding at step {} while {} exists", env, step,
               file);
  while (::access(file.c_str(), F_OK) == 0) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  spdlog::warn("TEST ONLY: step {} released ({} is gone)", step, file);
}

} // namespace berth
