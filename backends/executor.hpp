#pragma once

#include <condition_variable>
#include <cstddef>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace berth {

/// A bounded pool of threads for blocking backend calls (mount, umount, mkdir,
/// rm). Actor threads never block: they submit here and get the result as a
/// message. A call that hangs (a dead NFS server) occupies one thread only.
class executor {
public:
  /// Starts `threads` workers; at most `max_queued` tasks wait beyond them.
  executor(size_t threads, size_t max_queued);
  ~executor();

  executor(const executor&) = delete;
  executor& operator=(const executor&) = delete;

  /// Queues `task`; false when the queue is full or the executor stopped.
  bool submit(std::function<void()> task);

  /// Stops taking tasks, runs what is queued, joins the workers that finish
  /// within the destructor; hung workers are detached.
  void stop();

private:
  void run();

  std::mutex mtx_;
  std::condition_variable cv_;
  std::deque<std::function<void()>> queue_;
  std::vector<std::thread> workers_;
  size_t max_queued_;
  bool stopping_ = false;
};

} // namespace berth
