#pragma once

// Small helpers that several of the block backend's source files share
// (block_backend.cpp, block_node.cpp, block_publish.cpp, block_expand.cpp): how a record
// is named in messages, checks of its arguments, and what is mounted where.

#include <optional>
#include <string>
#include <vector>

#include <caf/error.hpp>
#include <caf/expected.hpp>
#include <sys/statvfs.h>

#include "backends/backend.hpp"
#include "backends/bind_publish.hpp"
#include "backends/loop_device.hpp"
#include "backends/mountinfo.hpp"

namespace berth {

/// "volume NAME" or "snapshot NAME", for messages.
std::string block_what(const volume_record& rec);

/// fsType of the parameters; xfs by default.
std::string block_fs_type(const option_map& options);

/// The prefix of the parameters the CO adds at creation (PVC name, namespace, ...).
extern const char* const block_k8s_prefix;

/// True for a creation parameter the block backend takes (fsType, backend,
/// csi.storage.k8s.io/*): fixed once the volume exists.
bool is_block_creation_key(const std::string& key);

/// The filesystem of a Docker block volume: its option fstype; ext4 by default, since
/// xfs needs at least block_backend::min_xfs_bytes and Docker volumes are often small.
std::string docker_block_fs_type(const option_map& options);

/// The loop device backing `image`, attached now as `setup` says when none is (`attached`
/// says so); ec::not_found naming `what` when the image does not exist.
caf::expected<std::string> attach_block_image(const std::string& image, const loop_setup& setup,
                                              bool& attached, const std::string& what);

/// The mount points of every mount of `device` (none when mountinfo cannot be read).
std::vector<std::string> block_mounts_of(const std::string& device);

/// ec::invalid_argument naming `what` unless `fs_type` is xfs or ext4.
caf::error check_block_fs_type(const std::string& fs_type, const std::string& what);

/// ec::invalid_argument naming `role` ("staging path", "target", ...) and
/// `what` unless `path` is a clean absolute path other than "/".
caf::error check_block_path(const std::string& path, const std::string& role,
                            const std::string& what);

/// The topmost mount at `path`, if any.
std::optional<mount_entry> block_mount_at(const std::string& path);

/// What this volume's mounts look like in mountinfo: its filesystem is on
/// `device` (the loop device backing its image, "" when none), and a raw block
/// publication is a bind of the device node (`device`, or `node` when the image
/// is detached but a bind of the recorded node may remain).
volume_origins block_origins(const std::vector<mount_entry>& mounts, const std::string& device,
                             const std::string& node);

/// statvfs(3) of `path`; ec::backend_failure naming `what` and `path`.
caf::expected<struct statvfs> block_statvfs(const std::string& path, const std::string& what);

} // namespace berth
