#include "persistence/crash_point.hpp"

#include <cstdio>
#include <cstdlib>
#include <map>
#include <mutex>
#include <string>
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

} // namespace berth
