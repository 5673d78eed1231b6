#include "backends/bind_publish.hpp"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>

#include <fcntl.h>
#include <spdlog/spdlog.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include "backends/local_options.hpp"
#include "backends/mountinfo.hpp"
#include "core/errors.hpp"

namespace fs = std::filesystem;

namespace berth {

namespace {

caf::error sys_error(int e, const std::string& what) {
  return make_error(e == EBUSY ? ec::in_use : ec::backend_failure,
                    what + ": " + std::strerror(e));
}

caf::error check_target(const std::string& target, const std::string& what) {
  if (!is_clean_absolute_path(target) || target == "/") {
    return make_error(ec::invalid_argument,
                      what + ": target \"" + target + "\" is not a clean absolute path");
  }
  return {};
}

/// Creates the target (and its parents). Sets `created` when it made the target itself.
caf::error make_target(const std::string& target, bool file, bool& created,
                       const std::string& what) {
  created = false;
  std::error_code err;
  fs::path parent = fs::path(target).parent_path();
  fs::create_directories(parent, err);
  if (err) {
    return make_error(ec::backend_failure,
                      what + ": cannot create " + parent.string() + ": " + err.message());
  }
  if (file) {
    int fd = ::open(target.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0640);
    if (fd >= 0) {
      ::close(fd);
      created = true;
    } else if (errno != EEXIST) {
      int e = errno;
      return sys_error(e, what + ": cannot create " + target);
    }
  } else if (::mkdir(target.c_str(), 0750) == 0) {
    created = true;
  } else if (errno != EEXIST) {
    int e = errno;
    return sys_error(e, what + ": cannot create " + target);
  }
  struct stat st {};
  if (::lstat(target.c_str(), &st) != 0) {
    int e = errno;
    return sys_error(e, what + ": cannot stat " + target);
  }
  if (S_ISLNK(st.st_mode)) {
    return make_error(ec::failed_precondition, what + ": target " + target + " is a symlink");
  }
  if (file ? S_ISDIR(st.st_mode) : !S_ISDIR(st.st_mode)) {
    return make_error(ec::failed_precondition,
                      what + ": target " + target + (file ? " is a directory, a file is needed"
                                                          : " is not a directory"));
  }
  return {};
}

/// "a mount of SOURCE (FSTYPE)" for messages.
std::string describe_mount(const mount_entry& e) {
  return "a mount of " + (e.source.empty() ? std::string("?") : e.source) + " (" + e.fstype + ")";
}

} // namespace

bool volume_origins::owns(const mount_entry& e) const {
  auto origin = origin_of(e);
  return (fs && *fs == origin) || (node && *node == origin);
}

caf::expected<bool> bind_publish(const std::string& source, const std::string& target, bool file,
                                 unsigned long flags, const volume_origins& mine,
                                 const std::string& what) {
  auto mounts = read_mountinfo();
  if (!mounts) {
    return mounts.error();
  }
  return bind_publish(source, target, file, flags, mine, what, *mounts);
}

caf::expected<bool> bind_publish(const std::string& source, const std::string& target, bool file,
                                 unsigned long flags, const volume_origins& mine,
                                 const std::string& what, const std::vector<mount_entry>& mounts) {
  if (auto err = check_target(target, what)) {
    return err;
  }
  struct stat st {};
  if (::lstat(target.c_str(), &st) == 0 && S_ISLNK(st.st_mode)) {
    return make_error(ec::invalid_argument, what + ": target " + target + " is a symlink");
  }
  auto here = mounts_at(mounts, target);
  if (!here.empty()) {
    const auto& top = *here.back();
    const auto& wanted = file ? mine.node : mine.fs;
    const auto& other = file ? mine.fs : mine.node;
    if (wanted && *wanted == origin_of(top)) {
      bool ro = (flags & MS_RDONLY) != 0;
      if (is_read_only(top.options) != ro) {
        return make_error(ec::already_exists,
                          what + " is already mounted at " + target + " "
                            + (ro ? "read-write" : "read-only") + ", this publish asks "
                            + (ro ? "read-only" : "read-write"));
      }
      return false; // published there already (a retry, or a publish whose commit was lost)
    }
    if (other && *other == origin_of(top)) {
      return make_error(ec::already_exists,
                        what + " is already mounted at " + target + " as "
                          + (file ? "a filesystem" : "a raw block device") + ", this publish asks "
                          + (file ? "a raw block device" : "a filesystem"));
    }
    return make_error(ec::failed_precondition,
                      what + ": target " + target + " already has " + describe_mount(top)
                        + " that is not this volume's; berth leaves it alone (unmount it, or "
                          "publish at another target)");
  }
  bool created = false;
  if (auto err = make_target(target, file, created, what)) {
    return err;
  }
  auto undo_target = [&] {
    if (created) {
      file ? ::unlink(target.c_str()) : ::rmdir(target.c_str());
    }
  };
  if (::mount(source.c_str(), target.c_str(), nullptr, MS_BIND, nullptr) != 0) {
    int e = errno;
    undo_target();
    return sys_error(e, what + ": bind mount of " + source + " on " + target + " failed");
  }
  // The remount replaces the per-mount flags: keep those the source has
  // (nosuid, nodev from the stage; the kernel keeps the atime ones by itself).
  // The ST_* bits equal the MS_* ones.
  struct statvfs vfs {};
  if (flags != 0 && ::statvfs(target.c_str(), &vfs) == 0) {
    flags |= vfs.f_flag & (ST_RDONLY | ST_NOSUID | ST_NODEV | ST_NOEXEC);
  }
  if (flags != 0
      && ::mount(nullptr, target.c_str(), nullptr, MS_REMOUNT | MS_BIND | flags, nullptr) != 0) {
    int e = errno;
    ::umount2(target.c_str(), MNT_DETACH);
    undo_target();
    return sys_error(e, what + ": remount of " + target + " with its flags failed");
  }
  return created;
}

caf::error bind_unpublish(const std::string& target, const volume_origins& mine, bool created,
                          const std::string& what, const std::vector<mount_entry>& mounts) {
  if (auto err = check_target(target, what)) {
    return err;
  }
  struct stat st {};
  const bool stated = ::lstat(target.c_str(), &st) == 0;
  if (!stated) {
    int e = errno;
    // A mount whose filesystem has shut down answers EIO to a stat of its root: it still
    // comes off, or its pod could never be cleaned up.
    if (e != EIO || mounts_at(mounts, target).empty()) {
      return e == ENOENT ? caf::error{} : sys_error(e, what + ": cannot stat " + target);
    }
  }
  if (stated && S_ISLNK(st.st_mode)) {
    return make_error(ec::invalid_argument, what + ": target " + target
                                              + " is a symlink; berth never made it, left alone");
  }
  // Stacked mounts of this volume (a publish repeated by hand) come off one by one, topmost
  // first: each umount2 takes off the top one of `here`.
  for (auto here = mounts_at(mounts, target); !here.empty(); here.pop_back()) {
    if (!mine.owns(*here.back())) {
      bool mine_below = std::any_of(here.begin(), here.end(),
                                    [&](const mount_entry* e) { return mine.owns(*e); });
      if (mine_below) {
        return make_error(ec::failed_precondition,
                          what + ": target " + target + " has " + describe_mount(*here.back())
                            + " on top of this volume's mount; berth leaves it alone: unmount "
                              "it, then unpublish again");
      }
      spdlog::info("{}: {} has {} that is not this volume's; left alone", what, target,
                   describe_mount(*here.back()));
      return {};
    }
    if (::umount2(target.c_str(), UMOUNT_NOFOLLOW) != 0 && errno != EINVAL) {
      int e = errno;
      return sys_error(e, what + ": unmount of " + target + " failed");
    }
  }
  if (!created) {
    return {}; // the CO's (or anyone's) directory or file: not berth's to delete
  }
  if (!stated && ::lstat(target.c_str(), &st) != 0) { // the target itself, uncovered now
    int e = errno;
    return e == ENOENT ? caf::error{} : sys_error(e, what + ": cannot stat " + target);
  }
  int rc = S_ISDIR(st.st_mode) ? ::rmdir(target.c_str()) : ::unlink(target.c_str());
  if (rc != 0 && errno != ENOENT) {
    int e = errno;
    if (e == ENOTEMPTY || e == EEXIST) {
      return make_error(ec::failed_precondition,
                        what + ": " + target
                          + " is not a mount point and not empty; left in place");
    }
    return sys_error(e, what + ": cannot remove " + target);
  }
  return {};
}

} // namespace berth
