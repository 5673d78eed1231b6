#pragma once

#include <chrono>
#include <cstddef>
#include <functional>
#include <memory>
#include <thread>
#include <vector>

namespace berth {

/// A bounded pool of threads for blocking backend calls (mount, umount, mkdir,
/// rm). Actor threads never block: they submit here and get the result as a
/// message. A call that hangs (a dead NFS server) occupies one thread only.
class executor {
public:
  /// Starts `threads` workers (at least one); at most `max_queued` tasks wait
  /// beyond the ones running.
  executor(size_t threads, size_t max_queued);

  /// Calls stop().
  ~executor();

  executor(const executor&) = delete;
  executor& operator=(const executor&) = delete;

  /// Queues `task`; false when the queue is full or the executor stopped.
  /// A task that throws is logged; its worker lives on.
  bool submit(std::function<void()> task);

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
  std::vector<std::thread> workers_;
};

} // namespace berth
