#pragma once

// The plugin mount ID -> container map, from dockerd's own files (read only). The Engine
// API never shows a mount ID (docs/design.md, "Mount IDs dockerd forgot"): dockerd
// keeps it in DockerRootDir/containers/<id>/config.v2.json, MountPoints[dest].ID, and
// clears it at a clean Unmount.

#include <map>
#include <string>

#include <caf/expected.hpp>

namespace berth::docker_sync {

/// Mount ID -> container ID.
using mount_map = std::map<std::string, std::string>;

/// The mount IDs of one config.v2.json, added to `out` for container `container_id` (the
/// file's "ID", else the one given). Mount points without an ID are left out.
/// ec::invalid_argument when the text is not a JSON object.
caf::error add_config_mount_ids(const std::string& json, const std::string& container_id,
                                mount_map& out);

/// Every container's mount IDs under `root_dir` (DockerRootDir). ec::unavailable naming the
/// directory when DIR/containers cannot be listed (absent, not permitted: berth then decides
/// per volume). A file that vanishes, is over limits::max_docker_config_bytes or does not
/// parse is skipped (its IDs are decided per volume).
caf::expected<mount_map> read_mount_map(const std::string& root_dir);

} // namespace berth::docker_sync
