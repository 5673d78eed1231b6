#pragma once

// The dockerd reconciliation (docs/design.md, "Mount IDs dockerd forgot"), as berthd
// runs it: two threads of its own, so no actor and no Beast session ever waits for
// dockerd.
//
//   follower thread: follow_events(--docker-api) ──open/event/down──▶ queue
//   berthctl release (admin API) ─────────────────────────job──────▶ queue
//   worker thread: queue ─▶ release_driver (keeper, rules, seams) ─▶ registry
//                  ▲ wakes at the earliest end of a die's grace period
//
// stop() raises the stop signal (the events stream ends at once), lets the worker finish
// the step it is in (an Engine API call is bounded by limits::docker_api_call_timeout, a
// registry answer by the seam) and joins both threads.

#include <condition_variable>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>

#include "core/operator_release.hpp"
#include "protocols/docker/engine/event_follower.hpp"
#include "protocols/docker/sync/release_driver.hpp"

namespace berth::docker_sync {

/// How berthd's reconciliation is set up.
struct sync_config {
  driver_config driver;                           ///< driver.stopping is set by docker_sync
  docker_engine::follow_options follow;           ///< the events stream's backoff
  /// The clock of the rules (tests may shift it); waits use it too.
  std::function<release_clock::time_point()> now = [] { return release_clock::now(); };
  /// Raised by stop(); the registry seams may watch it too. Made when null.
  std::shared_ptr<docker_engine::stop_signal> stop;
};

/// The running reconciliation; also the admin API's operator_release_desk.
class docker_sync final : public operator_release_desk {
public:
  explicit docker_sync(sync_config cfg);
  ~docker_sync() override;

  docker_sync(const docker_sync&) = delete;
  docker_sync& operator=(const docker_sync&) = delete;

  /// Starts the threads and reconciles once (the state has loaded and reconciled).
  void start();

  /// Ends the events stream and the worker, and joins them. Idempotent.
  void stop();

  /// operator_release_desk: runs on the worker; `done` is called from it (or at once with
  /// ec::aborted when the reconciliation is stopping).
  void release(std::string volume, std::string id, done_fn done) override;

private:
  /// A step for the worker; `drop` (may be empty) answers it when it will never run.
  struct job {
    std::function<void(release_driver&, release_clock::time_point)> run;
    std::function<void()> drop;
  };

  void post(job j);
  void run_worker();
  void run_follower();

  sync_config cfg_;
  std::unique_ptr<release_driver> driver_;
  std::shared_ptr<docker_engine::stop_signal> stop_;
  std::mutex mutex_;
  std::condition_variable cv_;
  std::deque<job> jobs_;
  bool stopping_ = false;
  std::thread worker_;
  std::thread follower_;
};

} // namespace berth::docker_sync
