#pragma once

// At start, copies of directory volumes that no record holds are deleted: a snapshot, a
// clone or an import killed during its copy leaves a temp directory, and one killed between
// its rename and its record leaves a whole copy that no client was told of. Only what a
// copy made under this state is ever chosen: a directory holds detail::copy_marker only if
// berth copied it, and the marker names the state it was made under, so a state directory
// wiped or replaced never costs the copies too. The transfers' own directories
// (STATE/exports, STATE/imports, BLOCK/exports) hold nothing a record holds: they are
// emptied, their mounts unmounted first.

#include <string>
#include <vector>

#include "core/record_kind.hpp"
#include "persistence/store.hpp"

namespace berth {

/// One entry of STATE/volumes or STATE/snapshots, as the sweep sees it.
struct copy_entry {
  std::string name;    ///< the file name in its directory
  bool marked = false; ///< it holds detail::copy_marker
  std::string made_under; ///< the state identity its marker names
};

/// The names of `entries` (of STATE/volumes for record_kind::volume, STATE/snapshots for
/// record_kind::snapshot) to delete: temp copies (".NAME.tmp.*"), and marked copies made
/// under the state `identity` that no record of the local backend of that kind holds.
/// Anything else is never chosen.
std::vector<std::string> copies_to_sweep(const state_snapshot& state, record_kind kind,
                                         const std::vector<copy_entry>& entries,
                                         const std::string& identity);

/// What the sweep did, for the start-up log.
struct copy_sweep_report {
  size_t removed = 0; ///< copies deleted
  size_t failed = 0;  ///< ones left, with a mount under them or not deletable (see the log)
};

/// Deletes what copies_to_sweep() chooses under STATE/volumes and STATE/snapshots, except
/// a directory with a mount on or under it. Logs each one it deletes and each it cannot.
/// Runs after the stray unmounts of reconciliation.
copy_sweep_report sweep_local_copies(const state_snapshot& state, const std::string& state_dir);

/// Empties the transfers' directories (`dirs`: STATE/exports, STATE/imports, and the block
/// backend's exports directory): unmounts every mount under them (lazily, deepest first),
/// detaches the loop devices whose backing file lies in them, and deletes what they hold.
/// Runs before the loop sweep, so an import's new image is no longer mounted when that
/// sweep looks at it. Returns how many entries it deleted.
size_t sweep_transfers(const std::vector<std::string>& dirs);

} // namespace berth
