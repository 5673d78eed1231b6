#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include <caf/actor_clock.hpp>
#include <caf/message.hpp>

#include "actors/actors.hpp"
#include "actors/direct_reply.hpp"
#include "actors/machine/coalescing_window.hpp"
#include "actors/machine/volume_machine.hpp"
#include "backends/backend.hpp"
#include "backends/task_runner.hpp"
#include "core/record_directory.hpp"
#include "core/telemetry/telemetry.hpp"

namespace berth {

/// Schedules the close of coalescing window `window` of volume `self` after `after`.
/// Empty: a delayed (atom::close_window, window) message; tests inject their own clock.
using window_timer =
  std::function<void(const volume_actor& self, uint64_t window, std::chrono::milliseconds after)>;

/// What a volume actor needs from the daemon around it.
struct volume_env {
  std::shared_ptr<backend> storage;          ///< this volume's backend
  std::shared_ptr<task_runner> exec;         ///< where blocking backend calls run
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
  /// Where the volume's committed record is listed (the registry's); null: nowhere.
  std::shared_ptr<record_directory> directory;
  /// Its loaded record is counted in `stats`' volume gauges already: a dormant volume the
  /// registry counted when it loaded it, woken now.
  bool counted = false;
};

struct volume_state {
  static inline const char* name = "volume";

  volume_env env;
  /// The volume's state as a plain machine (actors/machine/volume_machine.hpp): its
  /// committed record, its turns, the running transition and the backend calls. The
  /// handlers and the engine feed it events and carry out what it answers.
  volume_machine machine;
  /// The committed record (the machine's), read.
  const committed_record& rec() const { return machine.record(); }
  /// The actor system's clock, which the calls' times and deadlines follow: the steady
  /// clock in berthd, a clock the test moves by hand under CAF's test coordinator.
  const caf::actor_clock* clock = nullptr;
  std::chrono::steady_clock::time_point now() const { return clock->now(); }

  std::vector<reply_to<atom::ok>> drain_waiters;
  /// Wait for the hung calls to return (then, as drain_waiters, for idle).
  std::vector<reply_to<atom::ok>> settle_waiters;

  /// The expands and modifies merged into one backend call.
  using modify_window = coalescing_window<reply_to<volume_record>>;
  using modify_batch = modify_window::batch;
  modify_window window;
};

/// The behaviour of one volume. `exists` is true for a volume loaded from state.
volume_actor::behavior_type volume(volume_actor::stateful_pointer<volume_state> self,
                                   volume_env env, std::shared_ptr<const volume_record> rec,
                                   bool exists);

} // namespace berth
