#pragma once

// The mounts of a block volume's filesystem, which its CSI staging, its Docker mount and
// its export and import share (block_node.cpp, block_docker.cpp, block_transfer.cpp):
// mount(2) of its loop device, and the unmount of only the mounts that come from it.

#include <string>

#include <caf/error.hpp>

#include "backends/bind_publish.hpp"
#include "backends/detail/block_mount_flags.hpp"

namespace berth {

/// mount(2) of `device` (`fs_type`) on `path`, with online discard unless `opts` say
/// nodiscard (with_online_discard); an xfs copy (a snapshot, a clone) keeps its origin's
/// UUID, so xfs is mounted nouuid. ec::backend_failure naming `what`.
caf::error mount_block_device(const std::string& device, const std::string& path,
                              const std::string& fs_type, const block_mount_options& opts,
                              const std::string& what);

/// Unmounts, topmost first, the mounts at `path` that come from `mine`; stops at the
/// first foreign one, and sets `foreign_on_mine` when it covers one of `mine`.
/// With `lazy`, each is detached (MNT_DETACH). Busy is ec::in_use.
caf::error unmount_block_mounts(const std::string& path, const volume_origins& mine,
                                bool& foreign_on_mine, bool lazy, const std::string& what);

/// Unmounts this volume's mounts at `mountpoint` (those of `device`), then detaches
/// `device` unless something else still mounts it. A foreign mount on top is
/// ec::failed_precondition, and is left alone.
caf::error unmount_and_detach(const std::string& device, const std::string& mountpoint,
                              bool lazy, const std::string& what);

/// Mounts `device` at `mountpoint` for work berth does on a filesystem no record mounts
/// (a create's preparation: a root's owner, a copy's growth, an import's fill; an
/// export's read). Mounted there already by this device (a create that crashed) is
/// success; a foreign mount there is ec::failed_precondition and is left alone.
caf::error mount_to_prepare(const std::string& device, const std::string& mountpoint,
                            const std::string& fs_type, const std::string& what);

} // namespace berth
