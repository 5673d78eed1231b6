#pragma once

#include <chrono>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include <caf/message.hpp>
#include <caf/typed_response_promise.hpp>

#include "actors/actors.hpp"
#include "backends/backend.hpp"
#include "backends/executor.hpp"
#include "core/telemetry/telemetry.hpp"

namespace berth {

/// Schedules the close of coalescing window `window` of volume `self` after `after`.
/// Empty: a delayed (atom::close_window, window) message; tests inject their own clock.
using window_timer =
  std::function<void(const volume_actor& self, uint64_t window, std::chrono::milliseconds after)>;

/// What a volume actor needs from the daemon around it.
struct volume_env {
  std::shared_ptr<backend> storage;          ///< this volume's backend
  std::shared_ptr<executor> exec;            ///< where blocking backend calls run
  persistence_actor persistence;             ///< where records become durable
  std::chrono::milliseconds backend_timeout{std::chrono::seconds(30)};
  /// The host's mount points as read at start, for a volume loaded from state: it
  /// reconciles against them as its first transition. Empty for a new volume.
  std::shared_ptr<const std::set<std::string>> reconcile_with;
  /// How long the first expand or modify waits for others to merge with (0: none).
  std::chrono::milliseconds coalesce_window{2000};
  window_timer timer; ///< empty: real time
  /// What berthd counts, shared by all volumes: the mailbox's counts, the volume
  /// gauges (kept equal to the committed records), backend call durations.
  std::shared_ptr<telemetry> stats;
};

/// Settles a backend side effect that succeeded after its caller was told it timed
/// out: undoes it (a mount the record lacks) or adopts it (a finished remove). It
/// runs as a transition of its own (in turn, so it never races a retry) and must
/// end it with detail::finish().
using late_undo = std::function<void()>;

/// A backend call whose caller got a timeout but which has not returned. While one
/// exists the volume is *uncertain*: no second backend call starts (docs/design.md,
/// "A hung call blocks only its own volume"), requests that need one fail fast with
/// ec::aborted naming this call.
struct hung_call {
  std::string what;    ///< e.g. "stage", for the log and the error
  std::string started; ///< RFC 3339, when the call started
  std::chrono::steady_clock::time_point since; ///< when it timed out
  std::chrono::steady_clock::time_point began; ///< when it was submitted (its duration)
  late_undo settle;    ///< empty when a late success needs nothing
};

/// Which records a queued step may start on (the guards of detail::enqueue).
enum class admits {
  existing, ///< an existing record of the step's owner
  creation, ///< none yet, or an existing one of the step's owner (an idempotent create)
  internal, ///< the volume's own work (reconcile, settle): no guards; dropped once removed
};

/// One step waiting for its turn (the volume runs one transition at a time).
struct queued_step {
  std::string what;         ///< "mount (id c89a…)", for logs and refusals
  admits who = admits::existing;
  record_owner owner = record_owner::unset; ///< the namespace asking; unset for any
  caller from;              ///< who waits; an acquiring request whose caller left is not started
  /// Answers the waiting caller(s) when a guard refuses the step (internal steps: none).
  std::function<void(const caf::error&)> refuse;
  std::function<void()> run; ///< the transition; it answers and ends with detail::finish()
};

/// Expand and modify requests that arrived within one window, merged: they
/// become one backend modify call when the window closes.
struct modify_window {
  uint64_t number = 0;   ///< 0: no window is open
  modification change;   ///< the merged size (0: unchanged) and parameters
  /// Answered with the record, or the error.
  std::vector<caf::typed_response_promise<volume_record>> waiters;
};

struct volume_state {
  static inline const char* name = "volume";

  volume_env env;
  volume_record rec;   ///< the committed (durable) record
  bool exists = false; ///< created and durable, not removed
  bool busy = false;   ///< a transition is running
  /// The record agrees with the host: false until the first reconcile settles.
  bool reconciled = true;
  /// Counted in telemetry's reconcile_pending until the first reconcile finishes.
  bool first_reconcile_pending = false;
  std::deque<queued_step> queue;

  uint64_t next_token = 1;
  uint64_t current_token = 0; ///< the backend call the continuation waits for
  std::string current_call;   ///< e.g. "mount", for logs and timeouts
  std::string current_started; ///< RFC 3339, when the current call was submitted
  std::chrono::steady_clock::time_point current_began; ///< the same, for its duration
  /// When the current call times out. One timer serves every call: CAF 0.17 cannot
  /// cancel a delayed message, and its clock keeps each one (and a reference to the
  /// actor) until it is due, so a timer per call would hold memory for the rate of
  /// calls times the timeout. When the timer fires early for the current call (it was
  /// armed for an earlier one), it is armed again for the rest.
  std::chrono::steady_clock::time_point current_deadline;
  bool deadline_armed = false; ///< an atom::deadline is on its way
  executor::ticket current_ticket;
  std::function<void(caf::error)> continuation;
  late_undo current_undo;     ///< settles the current call if it lands after its timeout
  /// Calls that timed out and have not returned, by token (normally at most one).
  std::map<uint64_t, hung_call> hung;

  std::vector<caf::typed_response_promise<atom::ok>> drain_waiters;
  /// Wait for the hung calls to return (then, as drain_waiters, for idle).
  std::vector<caf::typed_response_promise<atom::ok>> settle_waiters;

  modify_window window;           ///< the open coalescing window, if number != 0
  uint64_t next_window = 1;
};

/// The behaviour of one volume. `exists` is true for a volume loaded from state.
volume_actor::behavior_type volume(volume_actor::stateful_pointer<volume_state> self,
                                   volume_env env, volume_record rec, bool exists);

} // namespace berth
