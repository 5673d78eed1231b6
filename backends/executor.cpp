#include "backends/executor.hpp"

#include <condition_variable>
#include <deque>
#include <exception>
#include <mutex>

#include <spdlog/spdlog.h>

namespace berth {

struct executor::shared_state {
  mutable std::mutex mtx;
  std::condition_variable work_cv;  ///< a task arrived or stop began
  std::condition_variable done_cv;  ///< a worker exited
  std::deque<std::function<void()>> queue;
  std::vector<bool> exited;         ///< per worker: its loop has returned
  size_t max_queued = 0;
  bool stopping = false;
};

namespace {

void run_task(std::function<void()>& task) {
  try {
    task();
  } catch (const std::exception& e) {
    spdlog::error("executor: task threw: {}", e.what());
  } catch (...) {
    spdlog::error("executor: task threw a non-standard exception");
  }
}

void worker_loop(std::shared_ptr<executor::shared_state> st, size_t index) {
  std::unique_lock<std::mutex> lock(st->mtx);
  for (;;) {
    st->work_cv.wait(lock, [&] { return st->stopping || !st->queue.empty(); });
    if (st->queue.empty()) {
      break; // stopping and drained
    }
    auto task = std::move(st->queue.front());
    st->queue.pop_front();
    lock.unlock();
    run_task(task);
    task = nullptr; // destroy captures outside the lock
    lock.lock();
  }
  st->exited[index] = true;
  st->done_cv.notify_all();
}

} // namespace

executor::executor(size_t threads, size_t max_queued)
  : state_(std::make_shared<shared_state>()) {
  if (threads == 0) {
    threads = 1;
  }
  state_->max_queued = max_queued;
  state_->exited.assign(threads, false);
  workers_.reserve(threads);
  for (size_t i = 0; i < threads; ++i) {
    workers_.emplace_back(worker_loop, state_, i);
  }
}

executor::~executor() {
  stop();
}

bool executor::submit(std::function<void()> task) {
  if (!task) {
    return false;
  }
  {
    std::lock_guard<std::mutex> lock(state_->mtx);
    if (state_->stopping || state_->queue.size() >= state_->max_queued) {
      return false;
    }
    state_->queue.push_back(std::move(task));
  }
  state_->work_cv.notify_one();
  return true;
}

size_t executor::queued() const {
  std::lock_guard<std::mutex> lock(state_->mtx);
  return state_->queue.size();
}

void executor::stop(std::chrono::milliseconds grace) {
  bool any_left = false;
  for (const auto& w : workers_) {
    any_left = any_left || w.joinable();
  }
  if (!any_left) {
    return; // stopped before: every worker is joined or detached
  }
  std::unique_lock<std::mutex> lock(state_->mtx);
  state_->stopping = true;
  state_->work_cv.notify_all();
  auto all_exited = [&] {
    for (bool e : state_->exited) {
      if (!e) {
        return false;
      }
    }
    return true;
  };
  state_->done_cv.wait_for(lock, grace, all_exited);
  std::vector<bool> exited = state_->exited;
  lock.unlock();
  size_t detached = 0;
  for (size_t i = 0; i < workers_.size(); ++i) {
    if (!workers_[i].joinable()) {
      continue;
    }
    if (exited[i]) {
      workers_[i].join();
    } else {
      workers_[i].detach();
      ++detached;
    }
  }
  if (detached > 0) {
    spdlog::warn("executor: {} worker(s) still busy after {} ms, detached", detached,
                 grace.count());
  }
}

} // namespace berth
