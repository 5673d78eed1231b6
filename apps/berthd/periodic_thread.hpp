#pragma once

// A thread that runs one step now and then once every interval until stopped: what the
// usage and health samplers share.

#include <chrono>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <thread>
#include <utility>

namespace berth {

class periodic_thread {
public:
  periodic_thread(std::chrono::milliseconds interval, std::function<void()> step)
      : interval_(interval), step_(std::move(step)) {}
  ~periodic_thread() { stop(); }
  periodic_thread(const periodic_thread&) = delete;
  periodic_thread& operator=(const periodic_thread&) = delete;

  /// Starts the thread: a step now, then one every interval.
  void start() {
    thread_ = std::thread([this] { run(); });
  }

  /// Stops and joins the thread; a step under way finishes first.
  void stop() {
    {
      std::lock_guard<std::mutex> guard{mtx_};
      stopping_ = true;
    }
    cv_.notify_all();
    if (thread_.joinable()) {
      thread_.join();
    }
  }

private:
  void run() {
    std::unique_lock<std::mutex> lock{mtx_};
    while (!stopping_) {
      lock.unlock();
      step_();
      lock.lock();
      cv_.wait_for(lock, interval_, [this] { return stopping_; });
    }
  }

  std::chrono::milliseconds interval_;
  std::function<void()> step_;
  std::mutex mtx_;
  std::condition_variable cv_;
  bool stopping_ = false;
  std::thread thread_;
};

} // namespace berth
