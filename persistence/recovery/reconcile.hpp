#pragma once

// Reconciliation (docs/design.md, "Reconciliation at start-up"), in three parts so
// that no backend call delays start-up:
//   reconcile_boot   at start, before anything is served: the boot decision,
//                    pure, made durable by the start-up compaction;
//   unmount_strays   at start: lazily detaches mounts of names with no record
//                    (MNT_DETACH never waits for a dead server);
//   reconcile_volume in each volume actor, as its first transition, on the
//                    executor with the backend timeout (needs_host_work says
//                    whether it calls the backend at all).

#include <map>
#include <memory>
#include <set>
#include <string>

#include "backends/backend.hpp"
#include "core/telemetry/tables.hpp"
#include "persistence/store.hpp"

namespace berth {

/// What reconciliation changed, for the log and telemetry::reconcile_actions.
struct reconcile_report {
  bool new_boot = false;
  size_t remounted = 0;     ///< same boot: host mounts, stagings and publications remade
  size_t restaged = 0;      ///< of remounted: CSI stagings made again
  size_t republished = 0;   ///< of remounted: CSI publications made again
  size_t unmounted = 0;     ///< host mounts the state lacks (crash before commit)
  size_t unmount_failed = 0; ///< such mounts that could not be detached (see the log)
  size_t cleared = 0;       ///< new boot: volumes whose counts were dropped
  size_t failed = 0;        ///< what could not be remade (see the log)
  size_t restage_failed = 0;   ///< of failed: stagings (and a publication without one)
  size_t republish_failed = 0; ///< of failed: publications
};

/// Adds what `report` says a volume's reconciliation did to `actions` (labels of
/// reconcile_action_names(): remounted, restaged, republished, unmounted,
/// mount_failed, restage_failed, republish_failed, reconcile_failed).
void count_reconcile_actions(const reconcile_report& report, counter_table& actions);

/// The boot decision: same boot (or an imported ECS state, or an unknown boot id)
/// keeps every count; a new boot clears every count, mount, staging and
/// publication (all containers are gone). Kept staging and target paths are
/// respelled canonically (realpath of the parent, as mountinfo and the CSI adapter
/// spell them; a record from before may not be). Sets state.boot_id to `boot_id`
/// and clears state.imported. No backend calls.
reconcile_report reconcile_boot(state_snapshot& state, const std::string& boot_id);

/// Lazily unmounts mounts under `volumes_root`/NAME/mnt whose NAME has no record
/// in `state`; returns how many.
size_t unmount_strays(const state_snapshot& state, const std::set<std::string>& mount_points,
                      const std::string& volumes_root, backend& local);

/// True when reconcile_volume(rec, ...) would call the backend; false when it only
/// corrects the record (then it may run on an actor thread). Cheap: no syscalls.
bool needs_host_work(const volume_record& rec, const backend& storage,
                     const std::set<std::string>& mount_points);

/// Makes one volume's record and the host agree (same boot rules):
/// - a counted volume whose host mount vanished is mounted again;
/// - a host mount no mount ID holds (a crash between mount(2) and its commit) is
///   detached;
/// - a vanished CSI staging or publication is made again; what cannot be is
///   cleared from the record, so the next NodeStage/NodePublish really runs.
/// Returns the record as it now should be; counts what it did in `report`.
volume_record reconcile_volume(volume_record rec, backend& storage,
                               const std::set<std::string>& mount_points,
                               reconcile_report& report);

/// True when reconcile_volume(rec, ...) would call no backend, log nothing and leave the
/// record as it is: a loaded volume so needs no reconciliation, and the registry may
/// leave it without an actor until it is first asked for. False for a volume in CSI use.
bool reconciled_already(const volume_record& rec, backend& storage,
                        const std::set<std::string>& mount_points);

} // namespace berth
