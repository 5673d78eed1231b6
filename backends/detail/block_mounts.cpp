#include "backends/detail/block_mounts.hpp"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>

#include <spdlog/spdlog.h>
#include <sys/mount.h>

#include "backends/detail/block_helpers.hpp"
#include "backends/loop_device.hpp"
#include "backends/mountinfo.hpp"
#include "core/errors.hpp"

namespace fs = std::filesystem;

namespace berth {

namespace {

caf::error unmount_path(const std::string& path, bool lazy, const std::string& what) {
  int flags = UMOUNT_NOFOLLOW | (lazy ? MNT_DETACH : 0);
  if (::umount2(path.c_str(), flags) == 0 || errno == EINVAL || errno == ENOENT) {
    return {};
  }
  int e = errno;
  return make_error(e == EBUSY ? ec::in_use : ec::backend_failure,
                    what + ": unmount of " + path + " failed: " + std::strerror(e));
}

} // namespace

caf::error mount_block_device(const std::string& device, const std::string& path,
                              const std::string& fs_type, const block_mount_options& opts,
                              const std::string& what) {
  std::string data = with_online_discard(opts).data;
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

caf::error unmount_block_mounts(const std::string& path, const volume_origins& mine,
                                bool& foreign_on_mine, bool lazy, const std::string& what) {
  foreign_on_mine = false;
  for (int i = 0; i < 16; ++i) {
    auto mounts = read_mountinfo();
    if (!mounts) {
      return mounts.error();
    }
    auto here = mounts_at(*mounts, path);
    if (here.empty()) {
      return {};
    }
    if (!mine.owns(*here.back())) {
      foreign_on_mine = std::any_of(here.begin(), here.end(),
                                    [&](const mount_entry* e) { return mine.owns(*e); });
      spdlog::info("{}: {} has a mount of {} ({}) that is not this volume's; left alone", what,
                   path, here.back()->source, here.back()->fstype);
      return {};
    }
    if (auto err = unmount_path(path, lazy, what)) {
      return err;
    }
    spdlog::info("{}: unmounted {}", what, path);
  }
  return {};
}

/// Unmounts this volume's mounts at `mountpoint`, then detaches `device` unless
/// something else still mounts it.
caf::error unmount_and_detach(const std::string& device, const std::string& mountpoint,
                              bool lazy, const std::string& what) {
  auto mounts = read_mountinfo();
  if (!mounts) {
    return mounts.error();
  }
  bool covered = false;
  if (auto err = unmount_block_mounts(mountpoint, block_origins(*mounts, device, ""), covered,
                                      lazy, what)) {
    return err;
  }
  if (covered) {
    return make_error(ec::failed_precondition,
                      what + ": " + mountpoint + " has a foreign mount on top of this volume's; "
                        + "berth leaves it alone: unmount it, then retry");
  }
  if (auto still = block_mounts_of(device); !still.empty()) {
    spdlog::warn("{}: {} stays attached: it is still mounted at {}", what, device, still.front());
    return {};
  }
  if (auto err = detach_loop_device(device)) {
    return err;
  }
  spdlog::info("{}: detached {}", what, device);
  return {};
}

/// Mounts `device` at `mountpoint` for a create's preparation (a root's owner, a copy's
/// growth). Mounted there already by this volume (a create that crashed) is success; a
/// foreign mount there is ec::failed_precondition and is left alone.
caf::error mount_to_prepare(const std::string& device, const std::string& mountpoint,
                            const std::string& fs_type, const std::string& what) {
  std::error_code err;
  fs::create_directories(mountpoint, err);
  if (err) {
    return make_error(ec::backend_failure,
                      what + ": cannot create " + mountpoint + ": " + err.message());
  }
  auto mounts = read_mountinfo();
  if (!mounts) {
    return mounts.error();
  }
  auto here = mounts_at(*mounts, mountpoint);
  if (here.empty()) {
    return mount_block_device(device, mountpoint, fs_type, {}, what);
  }
  if (!block_origins(*mounts, device, "").owns(*here.back())) {
    return make_error(ec::failed_precondition,
                      what + ": " + mountpoint + " has a mount of " + here.back()->source
                        + " that is not this volume's; berth leaves it alone");
  }
  return {};
}

} // namespace berth
