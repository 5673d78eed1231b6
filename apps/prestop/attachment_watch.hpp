#pragma once

// Keeps wait_state::attachments equal to the VolumeAttachments of one driver for one
// node: LIST (paged), then WATCH from the list's resourceVersion, applying ADDED,
// MODIFIED and DELETED. 410 Gone lists again; a closed watch watches again; a failed
// call is logged (once per kind) and retried with backoff. Never past the deadline.

#include <chrono>
#include <cstddef>
#include <memory>
#include <string>

#include "apps/prestop/detail/wait_state.hpp"
#include "protocols/kube/kube_api.hpp"

namespace berth::drain {

/// What to watch, and how patiently.
struct watch_target {
  std::string node;
  std::string driver;
  std::chrono::steady_clock::time_point deadline;
  size_t page_limit = 500;
  /// A watch that ends sooner than this without an event counts as a failure for the
  /// backoff, so a server that closes every watch at once is not hammered.
  std::chrono::milliseconds min_watch{1000};
};

/// Runs until st->stop or the deadline (blocking: start it on a thread of its own).
void watch_attachments(const std::shared_ptr<kube::kube_api>& api,
                       const std::shared_ptr<detail::wait_state>& st, const watch_target& t);

/// "va-1 (volume pv-1)", or "va-1 (inline volume)".
std::string describe(const kube::attachment& a);

} // namespace berth::drain
