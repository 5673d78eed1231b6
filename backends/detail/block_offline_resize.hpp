#pragma once

#include <chrono>
#include <string>

#include <caf/error.hpp>

#include "backends/detail/block_mount_flags.hpp"

namespace berth {

/// `e2fsck -f -y`, then `resize2fs`, of the unmounted ext4 filesystem on `device`: it
/// grows to fill the device (nothing to do is success). Helpers are killed after `timeout`.
caf::error grow_ext4_unmounted(const std::string& device, std::chrono::milliseconds timeout,
                               const std::string& what);

/// Grows the ext4 filesystem on `device` offline, for when the kernel refuses
/// an online resize (e.g. without CAP_SYS_RESOURCE): unmounts every mount of
/// the device (the published binds first, then `staging`), runs
/// `e2fsck -f -y` and `resize2fs`, mounts `staging` again with `stage_opts`
/// and re-binds each published mount point with its per-mount flags (ro,
/// nosuid, nodev, noexec, atime). When a mount is busy (a process has a file
/// open there), everything already unmounted is put back and the result is
/// ec::in_use naming it. Helpers are killed after `timeout`.
caf::error resize_ext4_offline(const std::string& device, const std::string& staging,
                               const block_mount_options& stage_opts,
                               std::chrono::milliseconds timeout, const std::string& what);

} // namespace berth
