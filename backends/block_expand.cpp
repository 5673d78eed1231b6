// block_backend, expansion: the image and its loop device (expand), then the filesystem on it.

#include "backends/block_backend.hpp"

#include <spdlog/spdlog.h>

#include "backends/detail/block_helpers.hpp"
#include "backends/detail/block_image.hpp"
#include "backends/detail/block_mount_flags.hpp"
#include "backends/detail/block_offline_resize.hpp"
#include "backends/helper_process.hpp"
#include "backends/loop_device.hpp"
#include "core/errors.hpp"

namespace berth {

namespace {

caf::expected<uint64_t> filesystem_size(const std::string& path, const std::string& what) {
  auto vfs = block_statvfs(path, what);
  if (!vfs) {
    return vfs.error();
  }
  return static_cast<uint64_t>(vfs->f_blocks) * vfs->f_frsize;
}

} // namespace

caf::error block_backend::expand(const volume_record& rec, uint64_t bytes) {
  auto image = checked_image(rec);
  if (!image) {
    return image.error();
  }
  const std::string what = block_what(rec);
  auto size = block_image_size(*image);
  if (!size) {
    return make_error(ec::not_found, what + ": " + describe(size.error()));
  }
  if (bytes < *size) {
    return make_error(ec::out_of_range, what + ": cannot shrink from " + std::to_string(*size)
                                          + " to " + std::to_string(bytes) + " bytes");
  }
  if (bytes > *size) {
    if (auto err = grow_block_image(*image, bytes, what)) {
      return err;
    }
  }
  // Also when the size is unchanged: a retry after a crash between the two steps.
  auto device = find_loop_device(*image);
  if (!device) {
    return device.error();
  }
  if (!device->empty()) {
    if (auto err = refresh_loop_capacity(*device)) {
      return err;
    }
  }
  spdlog::info("{}: expanded to {} bytes{}", what, bytes,
               device->empty() ? "" : " (" + *device + " too)");
  return {};
}

caf::expected<uint64_t> block_backend::grow_filesystem(const volume_record& rec) {
  auto image = checked_image(rec);
  if (!image) {
    return image.error();
  }
  const std::string what = block_what(rec);
  if (rec.staged_block) {
    auto device = find_loop_device(*image);
    if (!device) {
      return device.error();
    }
    if (device->empty()) {
      return block_image_size(*image);
    }
    if (auto err = refresh_loop_capacity(*device)) {
      return err;
    }
    return block_device_size(*device);
  }
  if (auto err = check_block_path(rec.staging_path, "staging path", what)) {
    return err;
  }
  return grow_mounted(rec, rec.staging_path);
}

caf::expected<uint64_t> block_backend::grow_mounted(const volume_record& rec,
                                                    const std::string& path) {
  const std::string what = block_what(rec);
  auto mounted = block_mount_at(canonical_node_path(path));
  if (!mounted) {
    return make_error(ec::failed_precondition,
                      what + (path == rec.staging_path ? ": not staged" : ": not mounted")
                        + " (nothing mounted at " + path + ")");
  }
  const std::string device = mounted->source;
  if (is_loop_device_path(device)) {
    if (auto err = refresh_loop_capacity(device)) {
      return err;
    }
  }
  if (mounted->fstype == "xfs") {
    auto grown = run_helper_checked({"xfs_growfs", "--", path}, helper_timeout_,
                                    what + ": xfs_growfs of " + path + " failed");
    if (!grown) {
      return grown.error();
    }
  } else if (mounted->fstype == "ext4") {
    auto grown = run_helper_checked({"resize2fs", "--", device}, helper_timeout_,
                                    what + ": online resize2fs of " + device + " failed");
    // Offline only where berth alone uses the mounts (a CSI staging and its binds):
    // a Docker volume's mount is under a running container.
    if (!grown && path == rec.staging_path) {
      spdlog::warn("{}; trying offline", describe(grown.error()));
      auto opts = parse_block_mount_flags(rec.stage_flags, what);
      if (!opts) {
        return opts.error();
      }
      if (auto err = resize_ext4_offline(device, path, *opts, helper_timeout_, what)) {
        return err;
      }
    } else if (!grown) {
      return make_error(ec::failed_precondition,
                        describe(grown.error())
                          + "; the kernel refused to grow ext4 while mounted (berthd needs "
                          + "CAP_SYS_RESOURCE for that): stop the volume's containers and resize "
                          + "again, and the filesystem grows at its next Mount");
    }
  } else {
    return make_error(ec::failed_precondition, what + ": cannot grow " + mounted->fstype + " at "
                                                 + path + " (xfs or ext4)");
  }
  auto size = filesystem_size(path, what);
  if (size) {
    spdlog::info("{}: {} at {} grown to {} bytes", what, mounted->fstype, path, *size);
  }
  return size;
}

} // namespace berth
