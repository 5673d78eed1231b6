// The test-only hold point: berthd waits at a named start-up step while a file exists.

#include "core/crash_point.hpp"

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>

#include <gtest/gtest.h>
#include <spdlog/sinks/base_sink.h>
#include <spdlog/spdlog.h>

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

/// Wakes whoever waits for a log line holding `needle` once it is logged.
class line_waiter : public spdlog::sinks::base_sink<std::mutex> {
public:
  explicit line_waiter(std::string needle) : needle_(std::move(needle)) {}

  /// True once the line was logged, false after 10 s without it.
  bool wait() {
    std::unique_lock<std::mutex> lock{seen_mtx_};
    return seen_cv_.wait_for(lock, std::chrono::seconds(10), [this] { return seen_; });
  }

protected:
  void sink_it_(const spdlog::details::log_msg& msg) override {
    if (std::string_view{msg.payload.data(), msg.payload.size()}.find(needle_)
        != std::string_view::npos) {
      std::lock_guard<std::mutex> lock{seen_mtx_};
      seen_ = true;
      seen_cv_.notify_all();
    }
  }
  void flush_() override {}

private:
  std::string needle_;
  std::mutex seen_mtx_;
  std::condition_variable seen_cv_;
  bool seen_ = false;
};

TEST(test_hold_point, waits_while_the_file_exists_at_its_step_only) {
  test::temp_dir dir;
  auto file = dir.path() + "/hold";
  std::ofstream{file} << "x";
  hold_env env{"start-loading:" + file};
  test_hold_point("start-compacted"); // another step: returns at once
  auto holding = std::make_shared<line_waiter>("holding at step start-loading");
  auto old = spdlog::default_logger();
  spdlog::set_default_logger(std::make_shared<spdlog::logger>("test", holding));
  // The file goes once the hold said it waits (or after 10 s without that line, so the
  // test ends); a hold that did not wait for it returns before it is gone.
  std::atomic<bool> removed{false};
  std::thread remover{[&] {
    removed = holding->wait();
    std::remove(file.c_str());
  }};
  test_hold_point("start-loading");
  EXPECT_TRUE(removed.load()) << "returned while " << file << " exists, or never said it holds";
  remover.join();
  spdlog::set_default_logger(old);
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
