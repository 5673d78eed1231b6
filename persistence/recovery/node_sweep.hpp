#pragma once

// At start, mounts of berth's block volumes below the kubelet directory that no
// record holds are taken away: a crash between a NodePublishVolume's bind mount
// (or a NodeStageVolume's mount) and the commit of its record leaves one. The record
// says the volume is not published (or staged) there, so berth answers the next
// NodeUnpublish as done without looking, and nothing else would ever unmount it.
// Found by the crash trials (tests/e2e/crash_trials).

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "backends/backend.hpp"
#include "backends/mountinfo.hpp"
#include "persistence/recovery/loop_sweep.hpp"
#include "persistence/store.hpp"

namespace berth {

/// One mount to take away.
struct stray_node_mount {
  std::string volume;      ///< the record whose device it mounts
  std::string mount_point; ///< as mountinfo shows it
  /// The record stages the volume elsewhere, so this is a bind of that staging (a
  /// publication); else it is a staging of its own.
  bool publication = false;
};

/// The mounts of `mounts` to take away: below `kubelet_dir`, from a loop device of
/// `loops` backed by a block record's image (`image_of`) or the record's own device, at a
/// path that record neither stages nor publishes. Publications come first: a
/// staging goes only after the binds of it. Anything else is never chosen.
std::vector<stray_node_mount>
node_mounts_to_sweep(const state_snapshot& state, const std::vector<mount_entry>& mounts,
                     const loop_list& loops,
                     const std::function<std::string(const volume_record&)>& image_of,
                     const std::string& kubelet_dir);

/// What the sweep did, for the start-up log.
struct node_sweep_report {
  size_t unmounted = 0; ///< mounts taken away
  size_t failed = 0;    ///< mounts that could not be (see the log)
};

/// Takes away what node_mounts_to_sweep() chooses on the host, through the "block"
/// backend of `backends` (none: nothing to sweep): unpublish for a publication,
/// sweep_staging for a staging, each of which checks again that the mount is the
/// volume's. Logs each mount it takes away and each it cannot. Local unmounts of
/// loop-mounted filesystems only, so it never waits on a server.
node_sweep_report sweep_node_mounts(const state_snapshot& state,
                                    const std::map<std::string, std::shared_ptr<backend>>& backends,
                                    const std::string& kubelet_dir);

} // namespace berth
