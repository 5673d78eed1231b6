#include "backends/local_backend.hpp"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <system_error>

#include <spdlog/spdlog.h>
#include <sys/mount.h>
#include <sys/stat.h>

#include "backends/detail/tree_copy.hpp"
#include "backends/helper_process.hpp"
#include "backends/mountinfo.hpp"
#include "core/errors.hpp"
#include "core/names.hpp"

namespace fs = std::filesystem;

namespace berth {

namespace {

/// Only nfs/efs plans depend on the host's EFS tooling; skip probing otherwise.
efs_environment environment_for(const option_map& options) {
  auto it = options.find("type");
  if (it != options.end() && (it->second == "efs" || it->second == "nfs" || it->second == "nfs4")) {
    return probe_efs_environment();
  }
  return {};
}

/// Creates `dir` (and parents) with mode 0755, whatever the umask.
caf::error make_dir(const std::string& volume, const fs::path& dir) {
  std::error_code err;
  fs::create_directories(dir, err);
  if (err) {
    return make_error(ec::backend_failure, "volume " + volume + ": cannot create " + dir.string()
                                             + ": " + err.message());
  }
  fs::permissions(dir, fs::perms(0755), fs::perm_options::replace, err);
  if (err) {
    return make_error(ec::backend_failure, "volume " + volume + ": cannot chmod " + dir.string()
                                             + ": " + err.message());
  }
  return {};
}

/// Makes a directory volume's data/, the root a container sees, with the owner and mode
/// its options ask for (0755 and root's when they ask none).
caf::error make_data_dir(const std::string& volume, const fs::path& data, const detail::root_ownership& root) {
  if (auto err = make_dir(volume, data)) {
    return err;
  }
  return detail::apply_root_ownership(volume, data.string(), root);
}

} // namespace

local_backend::local_backend(std::string state_dir, std::chrono::milliseconds helper_timeout)
  : helper_timeout_(helper_timeout) {
  // mountinfo shows resolved paths; resolve the root once so they compare equal.
  std::error_code err;
  fs::path root = fs::weakly_canonical(fs::absolute(state_dir), err);
  state_dir_ = (err ? fs::path(state_dir) : root).string();
  volumes_dir_ = (fs::path(state_dir_) / "volumes").string();
  snapshots_dir_ = (fs::path(state_dir_) / "snapshots").string();
  exports_dir_ = exports_dir_of(state_dir_);
}

caf::error local_backend::check_source(const std::string& volume, const mount_plan& plan) const {
  if (plan.kind == local_kind::bind) {
    // Resolved, so a symlink cannot lead into the state directory. A source
    // above it is refused too: a bind of /var/lib would hand the journal and
    // every other volume's data to the container just the same.
    std::error_code err;
    auto source = fs::weakly_canonical(plan.device, err).string();
    if (err) {
      source = plan.device;
    }
    if (overlaps(source, state_dir_)) {
      return make_error(ec::invalid_argument,
                        "device \"" + plan.device + "\" of volume " + volume + " (" + source
                          + ") is, contains or lies under berth's state directory " + state_dir_
                          + "; bind another host directory");
    }
  }
  if (plan.kind == local_kind::block) {
    struct stat st {};
    if (::stat(plan.device.c_str(), &st) == 0 && !S_ISBLK(st.st_mode)) {
      return make_error(ec::invalid_argument, "device \"" + plan.device + "\" of volume " + volume
                                                + " is not a block device");
    }
  }
  return {};
}

std::string local_backend::name() const {
  return "local";
}

caf::error local_backend::check_name(const std::string& volume) const {
  if (!is_valid_volume_name(volume)) {
    return make_error(ec::invalid_argument, invalid_name_message("volume", volume));
  }
  return {};
}

std::string local_backend::volume_dir(const std::string& volume) const {
  if (!is_valid_volume_name(volume)) {
    return {};
  }
  return volumes_dir_ + "/" + volume;
}

std::string local_backend::mountpoint(const volume_record& rec) const {
  if (!rec.mountpoint.empty()) {
    return rec.mountpoint; // an imported (ECS) volume keeps its own path
  }
  auto dir = volume_dir(rec.name);
  return dir.empty() ? dir : dir + "/mnt";
}

caf::error local_backend::validate(const std::string& volume, const option_map& options) const {
  if (auto err = check_name(volume)) {
    return err;
  }
  efs_environment any; // validation does not depend on the host's EFS tooling
  any.helper_installed = true;
  auto plan = plan_local_mount(volume, options, any);
  return plan ? check_source(volume, *plan) : plan.error();
}

caf::error local_backend::create(const volume_record& rec) {
  if (auto err = check_name(rec.name)) {
    return err;
  }
  if (rec.kind == record_kind::snapshot || !rec.source.empty()) {
    auto copied = create_copy(rec);
    return copied ? caf::error{} : copied.error();
  }
  if (auto err = make_storage_root(rec)) {
    return err;
  }
  if (auto dir = volume_dir(rec.name); !detail::read_copy_marker(dir).source.empty()) {
    // A copy or import whose caller was told it failed: this create is of an empty volume.
    if (auto err = drop_orphan_copy(dir, "volume " + rec.name)) {
      return err;
    }
  }
  auto root = detail::parse_root_ownership(rec.name, rec.options);
  if (!root) {
    return root.error();
  }
  auto dir = fs::path(volume_dir(rec.name));
  if (auto err = make_data_dir(rec.name, dir / "data", *root)) {
    return err;
  }
  return make_dir(rec.name, dir / "mnt");
}

caf::error local_backend::make_storage_root(const volume_record& rec) const {
  // Docker's mode for its volumes root: others may pass through to a mountpoint they
  // know, but not list the volume names. Nobody but berthd reaches a snapshot.
  const bool snapshot = rec.kind == record_kind::snapshot;
  return make_root(snapshot ? snapshots_dir_ : volumes_dir_,
                   snapshot ? fs::perms(0700) : fs::perms(0701),
                   to_string(rec.kind) + " " + rec.name);
}

caf::error local_backend::make_root(const std::string& root, fs::perms mode,
                                    const std::string& what) const {
  std::error_code err;
  fs::create_directories(root, err);
  fs::permissions(root, mode, fs::perm_options::replace, err);
  if (err) {
    char octal[8];
    std::snprintf(octal, sizeof octal, "%04o", static_cast<unsigned>(mode));
    return make_error(ec::backend_failure, what + ": cannot set mode " + octal + " on " + root
                                             + ": " + err.message());
  }
  return {};
}

// -- mount --------------------------------------------------------------------

caf::expected<std::string> local_backend::mount(const volume_record& rec) {
  if (auto err = check_name(rec.name)) {
    return err;
  }
  auto plan = plan_local_mount(rec.name, rec.options, environment_for(rec.options));
  if (!plan) {
    return plan.error();
  }
  for (const auto& w : plan->warnings) {
    spdlog::warn("{}", w);
  }
  if (auto err = check_source(rec.name, *plan)) {
    return err; // checked at create too; a symlink may have changed since
  }
  std::string target = mountpoint(rec);
  if (!is_clean_absolute_path(target)) {
    return make_error(ec::invalid_argument,
                      "volume " + rec.name + ": mountpoint \"" + target + "\" is not a clean absolute path");
  }
  if (is_mount_point(target)) {
    return target;
  }
  auto ensure_dirs = [&]() -> caf::error {
    auto data = fs::path(volume_dir(rec.name)) / "data";
    if (plan->kind == local_kind::directory && !fs::is_directory(data)) {
      if (auto err = make_data_dir(rec.name, data, plan->root)) {
        return err;
      }
    }
    return make_dir(rec.name, target);
  };
  caf::error err;
  int sys_errno = 0;
  if (plan->use_helper) {
    err = ensure_dirs();
    if (!err) {
      err = mount_helper(rec, *plan, target);
    }
  } else {
    // The dirs exist after create(); make them only when mount(2) says ENOENT.
    err = mount_syscall(rec, *plan, target, sys_errno);
    if (err && sys_errno == ENOENT) {
      err = ensure_dirs();
      if (!err) {
        err = mount_syscall(rec, *plan, target, sys_errno);
      }
    }
  }
  if (err) {
    return err;
  }
  mounts_.count(rec.name);
  return target;
}

caf::error local_backend::mount_syscall(const volume_record& rec, const mount_plan& plan,
                                        const std::string& target, int& sys_errno) const {
  std::string source = plan.kind == local_kind::directory ? volume_dir(rec.name) + "/data"
                                                          : plan.device;
  sys_errno = 0;
  auto fail = [&](const char* step) {
    int e = errno;
    sys_errno = e;
    return make_error(ec::backend_failure, "volume " + rec.name + ": " + step + " of " + source
                                             + " on " + target
                                             + (plan.fstype.empty() ? "" : " (" + plan.fstype + ")")
                                             + " failed: " + std::strerror(e));
  };
  const bool is_bind = (plan.flags & MS_BIND) != 0;
  if (!is_bind) {
    const char* data = plan.data.empty() ? nullptr : plan.data.c_str();
    if (::mount(source.c_str(), target.c_str(), plan.fstype.c_str(), plan.flags, data) != 0) {
      return fail("mount");
    }
    return {};
  }
  // A bind mount ignores other flags; they need a second, remounting call.
  if (::mount(source.c_str(), target.c_str(), nullptr, plan.flags & (MS_BIND | MS_REC), nullptr)
      != 0) {
    return fail("bind mount");
  }
  unsigned long extra = plan.flags & ~(MS_BIND | MS_REC);
  if (extra != 0
      && ::mount(nullptr, target.c_str(), nullptr, MS_BIND | MS_REMOUNT | extra, nullptr) != 0) {
    auto err = fail("remount with flags");
    ::umount2(target.c_str(), MNT_DETACH);
    return err;
  }
  return {};
}

caf::error local_backend::mount_helper(const volume_record& rec, const mount_plan& plan,
                                       const std::string& target) {
  auto argv = helper_command(plan, target);
  spdlog::debug("volume {}: running {}", rec.name, render_command(argv));
  auto out = run_helper_checked(argv, helper_timeout_,
                                "volume " + rec.name + ": mount of " + plan.device + " on "
                                  + target + " failed");
  if (!out) {
    return out.error();
  }
  return {};
}

// -- unmount and remove -------------------------------------------------------

caf::error local_backend::unmount(const volume_record& rec, bool lazy) {
  if (auto err = check_name(rec.name)) {
    return err;
  }
  std::string target = mountpoint(rec);
  if (::umount2(target.c_str(), lazy ? MNT_DETACH : 0) == 0) {
    return {};
  }
  int e = errno;
  if (e == EINVAL || e == ENOENT) {
    return {}; // not mounted: already unmounted
  }
  if (e == EBUSY) {
    return make_error(ec::in_use, "volume " + rec.name + ": " + target
                                    + " is busy (a process still uses it): " + std::strerror(e));
  }
  return make_error(ec::backend_failure, "volume " + rec.name + ": unmount of " + target
                                           + " failed: " + std::strerror(e));
}

caf::error local_backend::remove(const volume_record& rec) {
  if (auto err = check_name(rec.name)) {
    return err;
  }
  const std::string dir = storage_dir(rec);
  const std::string target = mountpoint(rec);
  // Never delete through a live mount: remove_all would descend into it.
  auto points = read_mount_points();
  if (!points) {
    return make_error(ec::backend_failure, "volume " + rec.name + ": not removed, cannot check mounts: "
                                             + describe(points.error()));
  }
  auto p = points->count(target) > 0 ? target : mount_at_or_under(*points, dir);
  if (!p.empty()) {
    return make_error(ec::in_use, "volume " + rec.name + " is still mounted at " + p
                                    + "; unmount it before removing");
  }
  std::error_code err;
  fs::remove_all(dir, err); // does not follow symlinks
  if (err) {
    return make_error(ec::backend_failure, "volume " + rec.name + ": cannot remove " + dir + ": "
                                             + err.message());
  }
  return {};
}

} // namespace berth
