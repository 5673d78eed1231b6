#include "backends/executor.hpp"

#include <condition_variable>
#include <deque>
#include <exception>
#include <mutex>

#include <spdlog/spdlog.h>

namespace berth {

struct executor::task : task_handle {
  enum class stage { queued, running, running_abandoned, finished, dropped };
  std::function<void()> fn;
  stage at = stage::queued; ///< guarded by shared_state::mtx
};

struct executor::shared_state {
  mutable std::mutex mtx;
  std::condition_variable work_cv; ///< a task arrived or stop began
  std::condition_variable done_cv; ///< a worker exited
  std::deque<std::shared_ptr<task>> queue;
  std::vector<std::thread> workers;
  std::vector<bool> exited; ///< per worker: its loop has returned
  size_t max_queued = 0;
  size_t hung = 0;          ///< workers running an abandoned task
  bool stopping = false;
};

namespace {

void run_task(std::function<void()>& fn) {
  try {
    fn();
  } catch (const std::exception& e) {
    spdlog::error("executor: task threw: {}", e.what());
  } catch (...) {
    spdlog::error("executor: task threw a non-standard exception");
  }
}

void worker_loop(std::shared_ptr<executor::shared_state> st, size_t index) {
  using stage = executor::task::stage;
  std::unique_lock<std::mutex> lock(st->mtx);
  for (;;) {
    st->work_cv.wait(lock, [&] { return st->stopping || !st->queue.empty(); });
    if (st->queue.empty()) {
      break; // stopping and drained
    }
    auto t = std::move(st->queue.front());
    st->queue.pop_front();
    if (t->at == stage::dropped) {
      continue;
    }
    t->at = stage::running;
    auto fn = std::move(t->fn);
    lock.unlock();
    run_task(fn);
    fn = nullptr; // destroy captures outside the lock
    lock.lock();
    if (t->at == stage::running_abandoned) {
      // A spare took this worker's place while it hung: retire.
      --st->hung;
      break;
    }
    t->at = stage::finished;
  }
  st->exited[index] = true;
  st->done_cv.notify_all();
}

/// Starts one more worker; the lock is held.
void add_worker(const std::shared_ptr<executor::shared_state>& st) {
  auto index = st->workers.size();
  st->exited.push_back(false);
  st->workers.emplace_back(worker_loop, st, index);
}

/// Joins workers that have retired; the lock is held (they no longer take it).
void reap_retired(executor::shared_state& st) {
  for (size_t i = 0; i < st.workers.size(); ++i) {
    if (st.exited[i] && st.workers[i].joinable()) {
      st.workers[i].join();
    }
  }
}

} // namespace

executor::executor(size_t threads, size_t max_queued)
  : state_(std::make_shared<shared_state>()) {
  if (threads == 0) {
    threads = 1;
  }
  state_->max_queued = max_queued;
  std::lock_guard<std::mutex> lock(state_->mtx);
  state_->workers.reserve(threads);
  for (size_t i = 0; i < threads; ++i) {
    add_worker(state_);
  }
}

executor::~executor() {
  stop();
}

executor::ticket executor::submit(std::function<void()> fn) {
  if (!fn) {
    return nullptr;
  }
  auto t = std::make_shared<task>();
  t->fn = std::move(fn);
  {
    std::lock_guard<std::mutex> lock(state_->mtx);
    if (state_->stopping || state_->queue.size() >= state_->max_queued) {
      return nullptr;
    }
    state_->queue.push_back(t);
  }
  state_->work_cv.notify_one();
  return t;
}

executor::abandoned executor::abandon(const ticket& handle) {
  if (!handle) {
    return abandoned::finished;
  }
  auto* t = static_cast<task*>(handle.get()); // every ticket of this executor is its task
  std::lock_guard<std::mutex> lock(state_->mtx);
  switch (t->at) {
    case task::stage::queued:
      t->at = task::stage::dropped;
      t->fn = nullptr;
      return abandoned::dropped;
    case task::stage::dropped:
      return abandoned::dropped;
    case task::stage::running:
      t->at = task::stage::running_abandoned;
      ++state_->hung;
      reap_retired(*state_);
      if (!state_->stopping) {
        add_worker(state_);
      }
      spdlog::warn("executor: a call hangs; a spare worker takes its place ({} hung)",
                   state_->hung);
      return abandoned::running;
    case task::stage::running_abandoned:
      return abandoned::running;
    case task::stage::finished:
      return abandoned::finished;
  }
  return abandoned::finished;
}

size_t executor::hung_workers() const {
  std::lock_guard<std::mutex> lock(state_->mtx);
  return state_->hung;
}

size_t executor::queued() const {
  std::lock_guard<std::mutex> lock(state_->mtx);
  return state_->queue.size();
}

void executor::stop(std::chrono::milliseconds grace) {
  std::unique_lock<std::mutex> lock(state_->mtx);
  bool any_left = false;
  for (const auto& w : state_->workers) {
    any_left = any_left || w.joinable();
  }
  if (!any_left) {
    return; // stopped before: every worker is joined or detached
  }
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
  size_t detached = 0;
  for (size_t i = 0; i < state_->workers.size(); ++i) {
    auto& w = state_->workers[i];
    if (!w.joinable()) {
      continue;
    }
    if (state_->exited[i]) {
      w.join();
    } else {
      w.detach();
      ++detached;
    }
  }
  lock.unlock();
  if (detached > 0) {
    spdlog::warn("executor: {} worker(s) still busy after {} ms, detached", detached,
                 grace.count());
  }
}

} // namespace berth
