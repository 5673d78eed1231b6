#pragma once

#include <map>
#include <memory>
#include <set>
#include <string>

#include "backends/backend.hpp"
#include "persistence/store.hpp"

namespace berth {

/// What reconciliation changed, for the startup log.
struct reconcile_report {
  bool new_boot = false;
  size_t remounted = 0;     ///< same boot, counted mounts whose host mount had vanished
  size_t unmounted = 0;     ///< host mounts the state lacks (crash before commit)
  size_t cleared = 0;       ///< new boot: volumes whose counts were dropped
  size_t failed = 0;        ///< mounts that could not be remade (see the log)
};

/// Holds `state` against the host at start (DESIGN "reconciliation"), changing
/// records and host mounts so the two agree:
/// - same boot (or an imported ECS state, or an unknown boot id): counts are kept;
///   a counted volume whose host mount vanished is mounted again;
/// - new boot: every count and mount is cleared (all containers are gone);
/// - a host mount the state lacks is unmounted, also under `volumes_root` for
///   names that have no record.
/// Sets state.boot_id to `boot_id` and clears state.imported.
reconcile_report reconcile(state_snapshot& state, const std::string& boot_id,
                           const std::map<std::string, std::shared_ptr<backend>>& backends,
                           const std::set<std::string>& mount_points,
                           const std::string& volumes_root);

} // namespace berth
