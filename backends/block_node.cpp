// block_backend, node side: stage, unstage, publish, unpublish and volume stats.

#include "backends/block_backend.hpp"

#include <cerrno>
#include <cstring>
#include <filesystem>

#include <spdlog/spdlog.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/statvfs.h>

#include "backends/bind_publish.hpp"
#include "backends/detail/block_helpers.hpp"
#include "backends/detail/block_image.hpp"
#include "backends/detail/block_mount_flags.hpp"
#include "backends/helper_process.hpp"
#include "backends/loop_device.hpp"
#include "backends/mountinfo.hpp"
#include "core/errors.hpp"

namespace fs = std::filesystem;

namespace berth {

namespace {

caf::error unmount_path(const std::string& path, const std::string& what) {
  if (::umount2(path.c_str(), UMOUNT_NOFOLLOW) == 0 || errno == EINVAL || errno == ENOENT) {
    return {};
  }
  int e = errno;
  return make_error(e == EBUSY ? ec::in_use : ec::backend_failure,
                    what + ": unmount of " + path + " failed: " + std::strerror(e));
}

caf::error mount_device(const std::string& device, const std::string& path,
                        const std::string& fs_type, const block_mount_options& opts,
                        const std::string& what) {
  std::string data = opts.data;
  if (fs_type == "xfs") {
    // A copy (snapshot, clone) has its origin's UUID; xfs refuses a second
    // mount of one UUID unless told not to care.
    append_mount_data(data, "nouuid");
  }
  if (::mount(device.c_str(), path.c_str(), fs_type.c_str(), opts.flags,
              data.empty() ? nullptr : data.c_str())
      != 0) {
    int e = errno;
    return make_error(ec::backend_failure, what + ": mount of " + device + " on " + path + " ("
                                             + fs_type + (data.empty() ? "" : ", " + data)
                                             + ") failed: " + std::strerror(e));
  }
  return {};
}

} // namespace

// -- stage and unstage --------------------------------------------------------

caf::error block_backend::format_if_blank(const std::string& volume, const std::string& device,
                                          const std::string& fs_type) {
  const std::string what = "volume " + volume;
  // blkid -p probes the device itself (no cache); exit 2: nothing found.
  std::vector<std::string> probe = {"blkid", "-p", "-o", "value", "-s", "TYPE", "--", device};
  auto res = run_helper(probe, helper_timeout_);
  if (!res) {
    return make_error(ec::backend_failure, what + ": cannot probe " + device + ": "
                                             + describe(res.error()));
  }
  if (res->timed_out) {
    return make_error(ec::timeout, what + ": `" + render_command(probe) + "` killed after "
                                     + std::to_string(helper_timeout_.count()) + " ms");
  }
  if (res->exit_code == 0) {
    std::string found = res->out;
    while (!found.empty() && (found.back() == '\n' || found.back() == ' ')) {
      found.pop_back();
    }
    if (found == fs_type) {
      return {};
    }
    return make_error(ec::failed_precondition,
                      what + ": " + device + " holds " + (found.empty() ? "data" : found)
                        + ", not the requested " + fs_type + "; it is not reformatted");
  }
  if (res->exit_code != 2) {
    return make_error(ec::backend_failure, what + ": `" + render_command(probe) + "` exited with "
                                             + std::to_string(res->exit_code) + ": " + res->err);
  }
  std::vector<std::string> mkfs = fs_type == "xfs"
                                    ? std::vector<std::string>{"mkfs.xfs", "-q", "--", device}
                                    : std::vector<std::string>{"mkfs.ext4", "-q", "-F", "--", device};
  auto made = run_helper_checked(mkfs, helper_timeout_,
                                 what + ": formatting " + device + " as " + fs_type + " failed");
  if (!made) {
    return made.error();
  }
  spdlog::info("{}: formatted {} as {}", what, device, fs_type);
  return {};
}

caf::expected<std::string> block_backend::stage(const volume_record& rec,
                                                const stage_request& req) {
  auto image = checked_image(rec);
  if (!image) {
    return image.error();
  }
  const std::string what = block_what(rec);
  if (auto err = check_block_path(req.staging_path, "staging path", what)) {
    return err;
  }
  std::string fs_type = !req.fs_type.empty() ? req.fs_type : block_fs_type(rec.options);
  block_mount_options opts;
  if (!req.block) {
    if (auto err = check_block_fs_type(fs_type, what)) {
      return err;
    }
    auto parsed = parse_block_mount_flags(req.flags, what);
    if (!parsed) {
      return parsed.error();
    }
    opts = std::move(*parsed);
  }
  if (auto size = block_image_size(*image); !size) {
    return make_error(ec::not_found, what + ": " + describe(size.error()));
  }
  bool attached = false;
  auto device = find_or_attach_loop_device(*image, attached);
  if (!device) {
    return device.error();
  }
  if (attached) {
    spdlog::info("{}: attached {}", what, *device);
  }
  if (req.block) {
    return device;
  }
  auto fail = [&](caf::error err) -> caf::expected<std::string> {
    if (attached) {
      detach_loop_device(*device); // leave nothing attached that no record knows
    }
    return err;
  };
  if (auto current = block_mount_at(req.staging_path)) {
    if (current->source == *device) {
      return device;
    }
    return fail(make_error(ec::failed_precondition,
                           what + ": staging path " + req.staging_path + " already has a mount of "
                             + current->source + " (" + current->fstype + ")"));
  }
  if (auto err = format_if_blank(rec.name, *device, fs_type)) {
    return fail(std::move(err));
  }
  std::error_code ec_dir;
  fs::create_directories(req.staging_path, ec_dir);
  if (ec_dir) {
    return fail(make_error(ec::backend_failure, what + ": cannot create staging path "
                                                  + req.staging_path + ": " + ec_dir.message()));
  }
  if (auto err = mount_device(*device, req.staging_path, fs_type, opts, what)) {
    return fail(std::move(err));
  }
  spdlog::info("{}: staged {} ({}) at {}", what, *device, fs_type, req.staging_path);
  return device;
}

caf::error block_backend::unstage(const volume_record& rec) {
  auto image = checked_image(rec);
  if (!image) {
    return image.error();
  }
  const std::string what = block_what(rec);
  if (!rec.staging_path.empty()) {
    if (auto err = check_block_path(rec.staging_path, "staging path", what)) {
      return err;
    }
    for (int i = 0; i < 16 && is_mount_point(rec.staging_path); ++i) {
      if (auto err = unmount_path(rec.staging_path, what)) {
        return err;
      }
      spdlog::info("{}: unmounted {}", what, rec.staging_path);
    }
  }
  auto device = find_loop_device(*image);
  if (!device) {
    return device.error();
  }
  if (!device->empty()) {
    if (auto err = detach_loop_device(*device)) {
      return err;
    }
    spdlog::info("{}: detached {}", what, *device);
  }
  return {};
}

// -- publish and unpublish ----------------------------------------------------

caf::error block_backend::publish(const volume_record& rec, const std::string& target,
                                  const publication& how) {
  auto image = checked_image(rec);
  if (!image) {
    return image.error();
  }
  const std::string what = block_what(rec);
  if (auto err = check_block_path(target, "target", what)) {
    return err;
  }
  auto opts = parse_block_mount_flags(how.flags, what);
  if (!opts) {
    return opts.error();
  }
  if (!opts->data.empty()) {
    spdlog::debug("{}: filesystem options \"{}\" apply at stage only, not on the bind of {}",
                  what, opts->data, target);
  }
  unsigned long flags = opts->flags | (how.readonly ? MS_RDONLY : 0);
  std::string source;
  if (how.block) {
    auto device = find_loop_device(*image);
    if (!device) {
      return device.error();
    }
    if (device->empty()) {
      return make_error(ec::failed_precondition, what + ": not staged (no loop device backs "
                                                   + *image + ")");
    }
    source = *device;
  } else {
    if (rec.staging_path.empty() || !is_mount_point(rec.staging_path)) {
      return make_error(ec::failed_precondition, what + ": not staged (nothing mounted at \""
                                                   + rec.staging_path + "\")");
    }
    source = rec.staging_path;
  }
  if (auto err = bind_publish(source, target, how.block, flags, what)) {
    return err;
  }
  spdlog::info("{}: published {} at {}{}", what, source, target, how.readonly ? " (ro)" : "");
  return {};
}

caf::error block_backend::unpublish(const volume_record& rec, const std::string& target) {
  const std::string what = block_what(rec);
  if (auto err = bind_unpublish(target, what)) {
    return err;
  }
  spdlog::debug("{}: unpublished {}", what, target);
  return {};
}

// -- statistics ---------------------------------------------------------------

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

} // namespace berth
