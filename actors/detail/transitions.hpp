#pragma once

// The transitions of a volume, each a description the engine runs
// (detail/engine.hpp). The behaviour (actors/volume.cpp) queues them.

#include <cstddef>
#include <functional>
#include <string>
#include <vector>

#include "actors/detail/engine.hpp"
#include "actors/machine/count_turn.hpp"
#include "actors/release_rules.hpp"

namespace berth::detail {

// -- Docker (actors/volume_docker.cpp) ----------------------------------------------

/// Docker Create; `source_bytes` is the size of the source its options name (0: none).
/// A Docker Create; with `tree` ("" for none), an import of that staging directory.
void run_create(self_ptr self, promise<atom::ok> rp, option_map options, uint64_t source_bytes,
                std::string tree = {});
/// Counts a Mount of `id` from dockerd instance `dockerd` ("" unknown), with its origin.
void run_mount(self_ptr self, promise<std::string> rp, std::string id, dockerd_key dockerd);
void run_unmount(self_ptr self, promise<atom::ok> rp, std::string id);
/// Docker Remove and CSI Delete{Volume,Snapshot}: only a record of `kind`.
void run_remove(self_ptr self, promise<atom::ok> rp, record_kind kind);

/// The host unmount when the last count leaves (the last Unmount, the release of
/// the last mount ID, the Remove of a volume an older state mounted): unmounts (a
/// timeout falls back to a lazy detach), then commits the committed record with
/// `uncount` applied, marked unmounted, and logs `line` of it (none when empty); a
/// record that cannot be saved mounts the volume again.
transition<none> unmount_last(self_ptr self, std::function<void(volume_record&)> uncount,
                              std::function<std::string(const volume_record&)> line);

// -- releases of mount IDs dockerd forgot (actors/volume_release.cpp) -----------------

/// Drops one mount ID's whole count as `r` says, decided again on the committed
/// record; answers the count dropped (see actors.hpp, atom::release).
void run_release(self_ptr self, promise<uint32_t> rp, mount_release r);

/// Creates `next`'s storage (with `tree`, from that import's staging directory), then
/// persists it: the volume exists once durable. A failed persist removes the storage again.
transition<std::string> creation(const volume_record& next, const std::string& tree = {});

// -- export and import of a delta (actors/volume_transfer.cpp) ----------------------------

/// A copy of this Docker volume for the export `id`; the record does not change.
void run_export_open(self_ptr self, promise<export_view> rp, const std::string& id,
                     export_form form);
/// The export `id` is over: its copy goes.
void run_export_close(self_ptr self, promise<atom::ok> rp, std::string id);
/// The delta spooled at `delta`, since snapshot `base`, applied to this Docker volume,
/// which nothing may use; the record does not change.
void run_import_delta(self_ptr self, promise<atom::ok> rp, const std::string& delta,
                      const volume_record& base);

// -- CSI (actors/volume_csi.cpp) ----------------------------------------------------

void run_csi_create(self_ptr self, promise<volume_record> rp, volume_spec spec);
void run_stage(self_ptr self, promise<atom::ok> rp, stage_request req);
void run_unstage(self_ptr self, promise<atom::ok> rp, std::string path);
void run_publish(self_ptr self, promise<atom::ok> rp, publish_request req);
void run_unpublish(self_ptr self, promise<atom::ok> rp, std::string target);
void run_grow(self_ptr self, promise<uint64_t> rp, std::string path);
void run_stats(self_ptr self, promise<volume_stats> rp, std::string path);

/// The most steps one shared turn carries out (path changes: one backend call and one
/// saved record; count changes: one saved record).
inline constexpr size_t max_shared_turn = 64;

// -- publishes and unpublishes that share a turn (actors/volume_paths.cpp) --------------

/// Carries out `steps`, publishes and unpublishes of distinct node paths, in one turn:
/// one backend call makes each change, one record saves every change that succeeded,
/// and each caller gets its own outcome. A record that cannot be saved undoes every
/// change, and each caller gets that error.
void run_path_changes(self_ptr self, std::vector<queued_step> steps);

// -- Mounts and Unmounts that share a turn (actors/volume_counts.cpp) --------------------

/// Carries out `steps`, Docker Mounts and Unmounts that only change counts, in one turn
/// as `counts` applied them: one record saves them all, then each caller gets its own
/// outcome (a refused one, its error). A record that cannot be saved fails every change.
void run_count_changes(self_ptr self, std::vector<queued_step> steps, const count_turn& counts);

// -- the coalescing mailbox (actors/volume_mailbox.cpp) -------------------------------

/// An expand or a modify, answered with the record: satisfied at once, refused at
/// once, or merged into the window.
void receive_modify(self_ptr self, promise<volume_record> rp, modify_request req);

/// Window `number` closes: its merged change is queued as one transition.
void close_window(self_ptr self, uint64_t number);

} // namespace berth::detail
