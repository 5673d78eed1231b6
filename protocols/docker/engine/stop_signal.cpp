#include "protocols/docker/engine/stop_signal.hpp"

namespace berth::docker_engine {

void stop_signal::request_stop() {
  std::lock_guard<std::mutex> guard{mutex_};
  if (stopped_) {
    return;
  }
  stopped_ = true;
  cv_.notify_all();
  if (waker_) {
    waker_();
  }
}

bool stop_signal::stop_requested() const {
  std::lock_guard<std::mutex> guard{mutex_};
  return stopped_;
}

bool stop_signal::wait_for(std::chrono::milliseconds d) {
  std::unique_lock<std::mutex> lock{mutex_};
  return cv_.wait_for(lock, d, [this] { return stopped_; });
}

void stop_signal::set_waker(std::function<void()> waker) {
  std::lock_guard<std::mutex> guard{mutex_};
  waker_ = std::move(waker);
  if (stopped_ && waker_) {
    waker_();
  }
}

void stop_signal::clear_waker() {
  std::lock_guard<std::mutex> guard{mutex_};
  waker_ = nullptr;
}

} // namespace berth::docker_engine
