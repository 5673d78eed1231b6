#pragma once

// A countdown latch (C++17 has no std::latch): a test waits for the event itself
// (every client's request is sent, a call is running) instead of sleeping.

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <mutex>

namespace berth::test {

class latch {
public:
  explicit latch(size_t count) : count_(count) {
  }

  /// One of the awaited events happened.
  void count_down() {
    std::lock_guard<std::mutex> guard{mtx_};
    if (count_ > 0 && --count_ == 0) {
      cv_.notify_all();
    }
  }

  /// Waits until every awaited event happened, at most `limit`; false when it ran out.
  template <class Rep, class Period>
  bool wait_for(std::chrono::duration<Rep, Period> limit) {
    std::unique_lock<std::mutex> lock{mtx_};
    return cv_.wait_for(lock, limit, [this] { return count_ == 0; });
  }

  /// Waits until every awaited event happened.
  void wait() {
    std::unique_lock<std::mutex> lock{mtx_};
    cv_.wait(lock, [this] { return count_ == 0; });
  }

private:
  std::mutex mtx_;
  std::condition_variable cv_;
  size_t count_;
};

} // namespace berth::test
