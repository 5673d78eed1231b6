#pragma once

// What the hook's workers (the VolumeAttachment watcher, the local poller) share with
// the thread that decides. Owned by shared_ptr: a worker blocked in a call at the end
// (a watch waits until its deadline) may outlive the wait, never its state.

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "apps/prestop/local_volumes.hpp"
#include "protocols/kube/kube_api.hpp"

namespace berth::drain::detail {

struct wait_state {
  std::mutex mtx;
  std::condition_variable cv;
  bool stop = false; ///< the wait is over: workers leave at their next step
  int workers = 0;   ///< workers still running

  // -- the VolumeAttachments of this driver for this node ----------------------
  bool listed = false; ///< a LIST completed: `attachments` is known
  std::map<std::string, kube::attachment> attachments; ///< by name
  uint64_t attachments_gen = 0; ///< bumped on every change (wakes the local poller)
  std::string kube_error;       ///< the last failure, "" once a call succeeded

  // -- the local berthd -------------------------------------------------------
  bool local_known = false; ///< berthd answered at least once
  std::vector<busy_volume> busy;
  std::string local_error; ///< the last failure, "" once berthd answered

  /// Sleeps until `t`, `stop`, or (when gen != nullptr) *gen differs from `seen`.
  /// Call with `lock` held.
  void sleep_until(std::unique_lock<std::mutex>& lock, std::chrono::steady_clock::time_point t,
                   const uint64_t* gen = nullptr, uint64_t seen = 0) {
    cv.wait_until(lock, t, [&] { return stop || (gen && *gen != seen); });
  }
};

} // namespace berth::drain::detail
