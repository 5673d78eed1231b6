#pragma once

// A task_runner the test runs by hand, for the volume driver's tests under CAF's test
// coordinator: a submitted backend call waits until the test runs it, or starts it and
// holds it running (a call that hangs) until the test lets it return. No thread.

#include <deque>
#include <functional>
#include <memory>
#include <utility>

#include "backends/task_runner.hpp"

namespace berth::test {

class manual_runner : public task_runner {
public:
  ticket submit(std::function<void()> fn) override {
    auto t = std::make_shared<task>();
    t->fn = std::move(fn);
    waiting_.push_back(t);
    return t;
  }

  abandoned abandon(const ticket& t) override {
    auto& held = static_cast<task&>(*t);
    switch (held.at) {
      case stage::waiting:
        held.at = stage::dropped;
        held.fn = nullptr;
        return abandoned::dropped;
      case stage::running: return abandoned::running;
      case stage::dropped: return abandoned::dropped;
      case stage::finished: return abandoned::finished;
    }
    return abandoned::finished;
  }

  /// Calls submitted and neither run, started nor dropped.
  size_t waiting() const {
    size_t n = 0;
    for (const auto& t : waiting_) {
      n += t->at == stage::waiting ? 1 : 0;
    }
    return n;
  }

  /// Runs the oldest waiting call to its end (it reports to its volume); false: none.
  bool run_next() {
    auto t = take_next();
    if (!t) {
      return false;
    }
    run(*t);
    return true;
  }

  /// Starts the oldest waiting call and holds it running, as a call that hangs: an
  /// abandon finds it running. One at a time; false: none waits, or one is held.
  bool start_next() {
    if (running_) {
      return false;
    }
    running_ = take_next();
    if (running_) {
      running_->at = stage::running;
    }
    return running_ != nullptr;
  }

  /// The held call returns (it reports to its volume, late if it was abandoned).
  void finish_running() {
    if (auto t = std::move(running_)) {
      run(*t);
    }
  }

private:
  enum class stage { waiting, running, finished, dropped };
  struct task : task_handle {
    std::function<void()> fn;
    stage at = stage::waiting;
  };

  std::shared_ptr<task> take_next() {
    while (!waiting_.empty()) {
      auto t = std::move(waiting_.front());
      waiting_.pop_front();
      if (t->at == stage::waiting) {
        return t;
      }
    }
    return nullptr;
  }

  static void run(task& t) {
    t.at = stage::running;
    auto fn = std::move(t.fn);
    fn();
    t.at = stage::finished;
  }

  std::deque<std::shared_ptr<task>> waiting_;
  std::shared_ptr<task> running_;
};

} // namespace berth::test
