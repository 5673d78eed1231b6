#pragma once

// A one-way stop flag that another thread raises to end a blocking call (the events
// stream, a backoff wait) at once.

#include <chrono>
#include <condition_variable>
#include <functional>
#include <mutex>

namespace berth::docker_engine {

/// Raised once, never lowered. Thread-safe.
class stop_signal {
public:
  /// Raises the flag, wakes every wait_for and runs the waker (if one is set). Idempotent.
  void request_stop();

  /// True once request_stop ran.
  bool stop_requested() const;

  /// Waits up to `d` or until the flag is raised: true when it is raised.
  bool wait_for(std::chrono::milliseconds d);

  /// Sets what request_stop runs to interrupt a blocking call (it must not block); run at
  /// once when the flag is already raised. Cleared by clear_waker, which waits for a waker
  /// in progress, so the waker never runs after clear_waker returned.
  void set_waker(std::function<void()> waker);

  /// Removes the waker.
  void clear_waker();

private:
  mutable std::mutex mutex_;
  std::condition_variable cv_;
  bool stopped_ = false;
  std::function<void()> waker_;
};

} // namespace berth::docker_engine
