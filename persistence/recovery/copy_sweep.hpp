#pragma once

// At start, copies of directory volumes that no record holds are deleted: a snapshot or
// a clone killed during its copy leaves a temp directory, and one killed between its
// rename and its record leaves a whole copy that no client was told of. Only what a
// copy made is ever chosen: a directory holds detail::copy_marker only if berth copied it.

#include <string>
#include <vector>

#include "core/record_kind.hpp"
#include "persistence/store.hpp"

namespace berth {

/// One entry of STATE/volumes or STATE/snapshots, as the sweep sees it.
struct copy_entry {
  std::string name;    ///< the file name in its directory
  bool marked = false; ///< it holds detail::copy_marker
};

/// The names of `entries` (of STATE/volumes for record_kind::volume, STATE/snapshots for
/// record_kind::snapshot) to delete: temp copies (".NAME.tmp.*"), and marked copies that
/// no record of the local backend of that kind holds. Anything else is never chosen.
std::vector<std::string> copies_to_sweep(const state_snapshot& state, record_kind kind,
                                         const std::vector<copy_entry>& entries);

/// What the sweep did, for the start-up log.
struct copy_sweep_report {
  size_t removed = 0; ///< copies deleted
  size_t failed = 0;  ///< ones left, with a mount under them or not deletable (see the log)
};

/// Deletes what copies_to_sweep() chooses under STATE/volumes and STATE/snapshots, except
/// a directory with a mount on or under it. Logs each one it deletes and each it cannot.
copy_sweep_report sweep_local_copies(const state_snapshot& state, const std::string& state_dir);

} // namespace berth
