#pragma once

#include <chrono>
#include <cstddef>
#include <functional>
#include <memory>
#include <thread>
#include <vector>

#include "backends/task_runner.hpp"

namespace berth {

/// A bounded pool of threads for blocking backend calls (mount, umount, mkdir,
/// rm). Actor threads never block: they submit here and get the result as a
/// message. A call that hangs (a dead NFS server) occupies one thread only:
/// once its caller abandons it, a spare worker takes its place, so hung calls
/// never use up the pool (docs/design.md, "A hung call blocks only its own volume").
class executor final : public task_runner {
public:
  /// One submitted task, as the workers keep it.
  struct task;

  /// Starts `threads` workers (at least one); at most `max_queued` tasks wait
  /// beyond the ones running.
  executor(size_t threads, size_t max_queued);

  /// Calls stop().
  ~executor() override;

  /// Queues `task`; empty when the queue is full or the executor stopped.
  /// A task that throws is logged; its worker lives on.
  ticket submit(std::function<void()> task) override;

  /// The caller stopped waiting for `t`. A task that has not started is dropped;
  /// a running one keeps its thread, which retires when the task returns, and a
  /// spare worker is started in its place. Idempotent.
  abandoned abandon(const ticket& t) override;

  /// Workers running an abandoned task (hung calls), not counted in the pool.
  size_t hung_workers() const;

  /// Stops taking tasks, lets the queued ones run, and joins the workers that
  /// finish within `grace`; a worker still busy then (a hung task) is detached.
  /// Idempotent.
  void stop(std::chrono::milliseconds grace = std::chrono::seconds(2));

  /// Tasks waiting for a worker (not counting running ones).
  size_t queued() const;

  /// Shared with the workers, so a detached worker never touches a dead executor.
  struct shared_state;

private:
  std::shared_ptr<shared_state> state_;
};

} // namespace berth
