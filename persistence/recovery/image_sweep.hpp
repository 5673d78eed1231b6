#pragma once

// At start, block images that no record holds are deleted: a create (or a snapshot's or
// a clone's copy) killed before its record was saved leaves its image, or the temp file
// it was being written to, and no one was told the volume exists. Nothing else would
// delete them, and a later create of that name would meet an image of another size.

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "backends/backend.hpp"
#include "persistence/store.hpp"

namespace berth {

/// What the sweep did, for the start-up log.
struct image_sweep_report {
  size_t removed = 0; ///< images and temp files deleted
  size_t failed = 0;  ///< ones that could not be deleted (see the log)
};

/// This state's identity: STATE/state/instance-id, 32 random hex digits made the first
/// time ("" when it cannot be made). A state directory wiped or replaced gets another,
/// even at the same path.
std::string state_instance(const std::string& state_dir);

/// The files of `files` (paths of regular files in the block image directories) to
/// delete: berth's temp images (block_image_temp_path's ".NAME.tmp.*"), and images
/// ("NAME.img") that `image_of` names for no record of `state`. Any other file is not
/// berth's and is never chosen.
std::vector<std::string> images_to_sweep(
  const state_snapshot& state, const std::function<std::string(const volume_record&)>& image_of,
  const std::vector<std::string>& files);

/// Deletes what images_to_sweep() chooses in the image directories of the "block"
/// backend of `backends` (none: nothing to sweep), except an image a loop device still
/// backs. Runs after the loop sweep. Logs each file it deletes and each it cannot.
///
/// Temp images are always deleted. An image without a record is deleted only when
/// BLOCK/owner names this state: the identity in STATE/state/instance-id, made at the
/// first start. The first start on a block directory writes BLOCK/owner and deletes no
/// image then; a berthd whose state is another (another --state-dir on the same block
/// directory, or a state directory wiped or replaced) deletes none and says so, so a
/// lost state never costs the images too.
image_sweep_report sweep_block_images(
  const state_snapshot& state, const std::map<std::string, std::shared_ptr<backend>>& backends,
  const std::string& state_dir);

} // namespace berth
