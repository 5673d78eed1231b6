// block_backend's volume statistics (NodeGetVolumeStats): statvfs of a mounted
// filesystem, the size of a raw block device, and the condition when either is gone; and
// what the host holds of a volume's image, for the usage sampler.

#include <cerrno>
#include <cstring>

#include <sys/stat.h>
#include <sys/statvfs.h>

#include "backends/block_backend.hpp"
#include "backends/detail/block_helpers.hpp"
#include "backends/detail/block_image.hpp"
#include "backends/loop_device.hpp"
#include "backends/mountinfo.hpp"
#include "core/errors.hpp"

namespace berth {

caf::expected<volume_stats> block_backend::stats(const volume_record& rec,
                                                 const std::string& path) {
  auto image = checked_image(rec);
  if (!image) {
    return image.error();
  }
  const std::string what = block_what(rec);
  if (auto err = check_block_path(path, "volume path", what)) {
    return err;
  }
  volume_stats out;
  auto block_stats = [&](const std::string& device) -> caf::expected<volume_stats> {
    out.block = true;
    auto size = block_device_size(device);
    if (!size) {
      out.abnormal = true;
      out.message = describe(size.error());
      return out;
    }
    out.total_bytes = *size;
    return out;
  };
  if (rec.staged_block && path == rec.staging_path) {
    // Nothing is mounted at a raw block staging path: ask the device.
    auto device = find_loop_device(*image);
    if (!device) {
      return device.error();
    }
    if (device->empty()) {
      out.block = true;
      out.abnormal = true;
      out.message = "no loop device backs " + *image;
      return out;
    }
    return block_stats(*device);
  }
  if (!is_mount_point(path)) {
    out.abnormal = true;
    out.message = path + " is not mounted (the " + (rec.staged_block ? "device" : "filesystem")
                  + " of " + what + " is gone from it)";
    return out;
  }
  struct stat st {};
  if (::stat(path.c_str(), &st) == 0 && S_ISBLK(st.st_mode)) {
    return block_stats(path);
  }
  struct statvfs vfs {};
  if (::statvfs(path.c_str(), &vfs) != 0) {
    int e = errno;
    out.abnormal = true;
    out.message = "statvfs of " + path + " failed: " + std::strerror(e);
    return out;
  }
  out.total_bytes = static_cast<uint64_t>(vfs.f_blocks) * vfs.f_frsize;
  out.available_bytes = static_cast<uint64_t>(vfs.f_bavail) * vfs.f_frsize;
  out.used_bytes = static_cast<uint64_t>(vfs.f_blocks - vfs.f_bfree) * vfs.f_frsize;
  out.total_inodes = vfs.f_files;
  out.free_inodes = vfs.f_ffree;
  out.used_inodes = vfs.f_files - vfs.f_ffree;
  return out;
}

caf::expected<block_backend::image_state>
block_backend::image_state_of(const volume_record& rec, const loop_index& attached) const {
  auto image = checked_image(rec);
  if (!image) {
    return image.error();
  }
  struct stat st {};
  if (::stat(image->c_str(), &st) != 0) {
    int e = errno;
    return make_error(ec::backend_failure, block_what(rec) + ": stat of " + *image + ": "
                                             + std::strerror(e));
  }
  image_state out;
  out.allocated_bytes = static_cast<uint64_t>(st.st_blocks) * 512;
  out.device = indexed_loop_device(attached, *image);
  if (!out.device.empty()) {
    auto dio = loop_direct_io(out.device);
    out.direct_io = dio && *dio;
  }
  return out;
}

} // namespace berth
