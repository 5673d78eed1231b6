#pragma once

#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "actors/actors.hpp"
#include "actors/volume.hpp"
#include "actors/volume_handles.hpp"

namespace berth {

/// What the registry needs to spawn volumes.
struct registry_config {
  /// Backends by name ("local"); a volume record names its backend.
  std::map<std::string, std::shared_ptr<backend>> backends;
  std::string default_backend = "local";
  std::shared_ptr<task_runner> exec; ///< where the volumes run their backend calls
  persistence_actor persistence;
  std::chrono::milliseconds backend_timeout{std::chrono::seconds(30)};
  /// The host's mount points read at start; each loaded volume reconciles
  /// against them in its own actor. Null: loaded volumes skip reconciliation.
  std::shared_ptr<const std::set<std::string>> host_mounts;
  /// The coalescing mailbox of every volume (volume_env has the same fields).
  std::chrono::milliseconds coalesce_window{2000};
  window_timer timer;
  /// What berthd counts (every volume's env gets it). Null only in tests that do not
  /// look: each volume then counts into a private one.
  std::shared_ptr<telemetry> stats;
  /// Every volume's committed record, which its volume keeps current: a list reads it.
  std::shared_ptr<record_directory> directory = std::make_shared<record_directory>();
  /// The actor of every created volume, which the registry keeps current: an adapter
  /// sends a Mount or an Unmount straight to it.
  std::shared_ptr<volume_handles> handles = std::make_shared<volume_handles>();
};

/// One name: its actor, and creations not yet answered.
struct registry_entry {
  volume_actor hdl;
  /// A loaded volume that needed no reconciliation (reconciled_already), with no actor
  /// yet: its record, listed and counted, until it is first asked for (registry_detail::
  /// find spawns its actor then). Null once it has an actor.
  std::shared_ptr<const volume_record> dormant;
  int pending_creates = 0;
  bool created = false;
};

struct registry_state {
  static inline const char* name = "registry";
  registry_config cfg;
  std::map<std::string, registry_entry> volumes;
  /// Names with a copy (snapshot, clone) of them in progress, and how many: they
  /// cannot be removed until it ends.
  std::map<std::string, int> copying;
};

/// Takes the records of `initial` (loaded state, the boot decision made; shared with the
/// persistence actor, not copied): each that the host agrees with stays dormant, the
/// others get their actor at once, which reconciles first (docs/design.md, "Dormant
/// volumes").
registry_actor::behavior_type registry(registry_actor::stateful_pointer<registry_state> self,
                                       registry_config cfg, shared_records initial);

} // namespace berth
