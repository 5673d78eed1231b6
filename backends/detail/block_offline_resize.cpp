#include "backends/detail/block_offline_resize.hpp"

#include <cerrno>
#include <cstring>
#include <vector>

#include <spdlog/spdlog.h>
#include <sys/mount.h>

#include <sys/stat.h>

#include "backends/bind_publish.hpp"
#include "backends/helper_process.hpp"
#include "backends/mountinfo.hpp"
#include "core/errors.hpp"

namespace berth {

namespace {

/// MS_* bits of mountinfo's per-mount options ("rw,nosuid,nodev,relatime").
unsigned long per_mount_flags(const std::string& options) {
  unsigned long flags = 0;
  size_t start = 0;
  while (start <= options.size()) {
    size_t comma = options.find(',', start);
    std::string opt = options.substr(start, comma == std::string::npos ? std::string::npos
                                                                       : comma - start);
    start = comma == std::string::npos ? options.size() + 1 : comma + 1;
    if (opt == "ro") {
      flags |= MS_RDONLY;
    } else if (opt == "nosuid") {
      flags |= MS_NOSUID;
    } else if (opt == "nodev") {
      flags |= MS_NODEV;
    } else if (opt == "noexec") {
      flags |= MS_NOEXEC;
    } else if (opt == "noatime") {
      flags |= MS_NOATIME;
    } else if (opt == "nodiratime") {
      flags |= MS_NODIRATIME;
    }
  }
  return flags;
}

caf::error mount_staging(const std::string& device, const std::string& staging,
                         const block_mount_options& opts, const std::string& what) {
  const auto data = with_online_discard(opts).data;
  if (::mount(device.c_str(), staging.c_str(), "ext4", opts.flags, data.c_str())
      != 0) {
    int e = errno;
    return make_error(ec::backend_failure, what + ": remount of " + device + " on " + staging
                                             + " after an offline resize failed: "
                                             + std::strerror(e));
  }
  return {};
}

} // namespace

caf::error grow_ext4_unmounted(const std::string& device, std::chrono::milliseconds timeout,
                               const std::string& what) {
  std::vector<std::string> fsck = {"e2fsck", "-f", "-y", "--", device};
  auto checked = run_helper(fsck, timeout);
  // e2fsck: 0 clean, 1 errors corrected, 2 corrected and reboot advised (root fs only).
  if (!checked || checked->timed_out || checked->exit_code < 0 || checked->exit_code >= 4) {
    return make_error(checked && checked->timed_out ? ec::timeout : ec::backend_failure,
                      what + ": `" + render_command(fsck) + "` failed"
                        + (checked ? ": " + checked->err + checked->out
                                   : ": " + describe(checked.error())));
  }
  auto resized = run_helper_checked({"resize2fs", "--", device}, timeout,
                                    what + ": offline resize of " + device + " failed");
  return resized ? caf::error{} : resized.error();
}

caf::error resize_ext4_offline(const std::string& device, const std::string& staging,
                               const block_mount_options& stage_opts,
                               std::chrono::milliseconds timeout, const std::string& what) {
  auto entries = read_mountinfo();
  if (!entries) {
    return entries.error();
  }
  std::vector<mount_entry> binds; // every other mount of the device, newest first
  bool staged = false;
  for (auto it = entries->rbegin(); it != entries->rend(); ++it) {
    if (it->source != device) {
      continue;
    }
    if (it->mount_point == staging) {
      staged = true;
    } else if (it->root != "/") {
      return make_error(ec::failed_precondition, what + ": " + it->mount_point + " binds "
                                                   + it->root + " of " + device
                                                   + ", not the volume; not resizing offline");
    } else {
      binds.push_back(*it);
    }
  }
  if (!staged) {
    return make_error(ec::failed_precondition, what + ": " + device + " is not mounted at "
                                                 + staging);
  }
  // -- take everything down, or put back what came down ------------------------
  std::vector<mount_entry> unmounted;
  volume_origins mine; // the binds put back are of this device's filesystem
  struct stat dev {};
  if (::stat(device.c_str(), &dev) == 0) {
    mine.fs = mount_origin{dev_string(dev.st_rdev), "/"};
  }
  auto put_back = [&] {
    for (auto it = unmounted.rbegin(); it != unmounted.rend(); ++it) {
      auto put = bind_publish(staging, it->mount_point, false, per_mount_flags(it->options), mine,
                              what);
      if (!put) {
        spdlog::error("{}", describe(put.error()));
      }
    }
  };
  for (const auto& b : binds) {
    if (::umount2(b.mount_point.c_str(), UMOUNT_NOFOLLOW) != 0) {
      int e = errno;
      put_back();
      return make_error(e == EBUSY ? ec::in_use : ec::backend_failure,
                        what + ": online resize refused, and offline needs " + b.mount_point
                          + " unmounted: " + std::strerror(e));
    }
    unmounted.push_back(b);
  }
  if (::umount2(staging.c_str(), UMOUNT_NOFOLLOW) != 0) {
    int e = errno;
    put_back();
    return make_error(e == EBUSY ? ec::in_use : ec::backend_failure,
                      what + ": online resize refused, and offline needs " + staging
                        + " unmounted: " + std::strerror(e));
  }
  spdlog::warn("{}: online resize refused; resizing {} offline ({} published mounts taken down)",
               what, device, binds.size());
  // -- check and resize ---------------------------------------------------------
  caf::error failure = grow_ext4_unmounted(device, timeout, what);
  // -- bring everything back, whatever happened ---------------------------------
  if (auto err = mount_staging(device, staging, stage_opts, what)) {
    return failure ? failure : err;
  }
  put_back();
  if (!failure) {
    spdlog::info("{}: resized ext4 on {} offline", what, device);
  }
  return failure;
}

} // namespace berth
