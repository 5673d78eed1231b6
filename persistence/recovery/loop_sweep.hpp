#pragma once

// At start, loop devices of berth's block images that no record stages or mounts
// are detached: a crash between a stage's (or a Docker Mount's) loop attach and the
// commit of its record leaves one, and nothing else would ever detach it.

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "backends/backend.hpp"
#include "persistence/store.hpp"

namespace berth {

/// Attached loop devices as list_loop_devices() returns them: {device, backing file}.
using loop_list = std::vector<std::pair<std::string, std::string>>;

/// What the sweep did, for the start-up log.
struct loop_sweep_report {
  size_t detached = 0; ///< loop devices detached
  size_t failed = 0;   ///< loop devices that could not be detached (see the log)
  size_t thawed = 0;   ///< frozen filesystems of kept devices thawed (a crash mid-snapshot)
  size_t direct_io_on = 0; ///< kept devices attached without direct I/O that now use it
};

/// The devices of `loops` to detach: those whose backing file lies in one of
/// `image_dirs` (where berth keeps its block images) and which no record of
/// `state` holds staged or mounted, neither by its recorded device nor by its
/// image (`image_of(record)`). A device backed by any other file is not berth's and is
/// never chosen.
loop_list loops_to_sweep(const state_snapshot& state, const std::vector<std::string>& image_dirs,
                         const std::function<std::string(const volume_record&)>& image_of,
                         const loop_list& loops);

/// Detaches what loops_to_sweep() chooses among the attached loop devices, with the
/// image directories and image paths of the "block" backend of `backends` (none:
/// nothing to sweep). Logs each device it detaches and each it cannot. The filesystem
/// of each device it keeps is thawed if frozen: only a snapshot's copy freezes one, and
/// none runs before berthd serves. A kept device attached without direct I/O (by a berthd
/// before it attached with it by default) gets it now, unless its record says
/// directIO=false; its block size stays as it was until it is attached again, and the log
/// says both.
loop_sweep_report sweep_loop_devices(const state_snapshot& state,
                                     const std::map<std::string, std::shared_ptr<backend>>& backends);

} // namespace berth
