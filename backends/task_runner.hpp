#pragma once

// Where a volume runs its blocking backend calls: what the volume's driver
// (actors/volume_calls.cpp) needs of a pool of threads. berthd's is the executor
// (backends/executor.hpp); the driver's tests run a queue by hand, so a call can
// report before or after its deadline without a thread or a sleep.

#include <functional>
#include <memory>

namespace berth {

class task_runner {
public:
  /// One submitted task, as the runner keeps it; opaque to the caller.
  struct task_handle {
    virtual ~task_handle() = default;
  };
  using ticket = std::shared_ptr<task_handle>;

  /// What abandon() found.
  enum class abandoned {
    dropped,  ///< the task had not started and never will
    running,  ///< the task is running; it keeps its thread until it returns
    finished, ///< the task had already finished
  };

  task_runner() = default;
  task_runner(const task_runner&) = delete;
  task_runner& operator=(const task_runner&) = delete;
  virtual ~task_runner() = default;

  /// Queues `task`; empty when the runner takes no more.
  virtual ticket submit(std::function<void()> task) = 0;

  /// The caller stopped waiting for `t`: a task that has not started is dropped, a
  /// running one runs on to its end. Idempotent.
  virtual abandoned abandon(const ticket& t) = 0;
};

} // namespace berth
