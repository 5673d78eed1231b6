#include "backends/bind_publish.hpp"

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

} // namespace

caf::error bind_publish(const std::string& source, const std::string& target, bool file,
                        unsigned long flags, const std::string& what) {
  if (auto err = check_target(target, what)) {
    return err;
  }
  struct stat st {};
  if (::lstat(target.c_str(), &st) == 0 && S_ISLNK(st.st_mode)) {
    return make_error(ec::failed_precondition, what + ": target " + target + " is a symlink");
  }
  if (is_mount_point(target)) {
    return {};
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
  return {};
}

caf::error bind_unpublish(const std::string& target, const std::string& what) {
  if (auto err = check_target(target, what)) {
    return err;
  }
  struct stat st {};
  if (::lstat(target.c_str(), &st) != 0) {
    int e = errno;
    return e == ENOENT ? caf::error{} : sys_error(e, what + ": cannot stat " + target);
  }
  // Stacked mounts (a publish repeated by hand) come off one by one.
  for (int i = 0; !S_ISLNK(st.st_mode) && i < 16 && is_mount_point(target); ++i) {
    if (::umount2(target.c_str(), UMOUNT_NOFOLLOW) != 0 && errno != EINVAL) {
      int e = errno;
      return sys_error(e, what + ": unmount of " + target + " failed");
    }
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
