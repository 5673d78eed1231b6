// block_backend, node side: stage and unstage, and what publish shares with them (the
// confinement of node paths, the view of a node path, how an image is attached). Publish and unpublish:
// block_publish.cpp; volume statistics: block_stats.cpp.

#include "backends/block_backend.hpp"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>

#include <spdlog/spdlog.h>
#include <sys/mount.h>
#include <sys/stat.h>

#include "backends/bind_publish.hpp"
#include "backends/detail/block_helpers.hpp"
#include "backends/detail/block_mount_flags.hpp"
#include "backends/detail/block_mounts.hpp"
#include "backends/detail/block_parameters.hpp"
#include "backends/helper_process.hpp"
#include "backends/loop_device.hpp"
#include "backends/mountinfo.hpp"
#include "core/errors.hpp"

namespace fs = std::filesystem;

namespace berth {

caf::expected<std::string> block_backend::node_path(const std::string& path,
                                                    const std::string& role,
                                                    const std::string& what) const {
  auto confined = confine_node_path(path, kubelet_dir_, role);
  if (!confined) {
    return make_error(ec::invalid_argument, what + ": " + describe(confined.error()));
  }
  return confined;
}

caf::expected<block_backend::node_view>
block_backend::view_at(const volume_record& rec, const std::string& path,
                       const std::string& role) const {
  auto image = checked_image(rec);
  if (!image) {
    return image.error();
  }
  node_view out;
  out.what = block_what(rec);
  auto confined = node_path(path, role, out.what);
  if (!confined) {
    return confined.error();
  }
  out.path = std::move(*confined);
  auto device = find_loop_device(*image);
  if (!device) {
    return device.error();
  }
  out.device = std::move(*device);
  auto mounts = read_mountinfo();
  if (!mounts) {
    return mounts.error();
  }
  out.mounts = std::move(*mounts);
  return out;
}

// -- stage and unstage --------------------------------------------------------

caf::expected<std::string> block_backend::probe_filesystem(const std::string& what,
                                                          const std::string& device) {
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
  if (res->exit_code == 2) {
    return std::string{};
  }
  if (res->exit_code != 0) {
    return make_error(ec::backend_failure, what + ": `" + render_command(probe) + "` exited with "
                                             + std::to_string(res->exit_code) + ": " + res->err);
  }
  std::string found = res->out;
  while (!found.empty() && (found.back() == '\n' || found.back() == ' ')) {
    found.pop_back();
  }
  return found.empty() ? std::string{"data"} : found;
}

caf::expected<bool> block_backend::format_if_blank(const std::string& volume,
                                                   const std::string& device,
                                                   const std::string& fs_type) {
  const std::string what = "volume " + volume;
  auto found = probe_filesystem(what, device);
  if (!found) {
    return found.error();
  }
  if (*found == fs_type) {
    return false;
  }
  if (!found->empty()) {
    return make_error(ec::failed_precondition,
                      what + ": " + device + " holds " + *found + ", not the requested "
                        + fs_type + "; it is not reformatted");
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
  return true;
}

caf::expected<std::string> block_backend::stage(const volume_record& rec,
                                                const stage_request& req) {
  auto image = checked_image(rec);
  if (!image) {
    return image.error();
  }
  const std::string what = block_what(rec);
  auto staging = node_path(req.staging_path, "staging path", what);
  if (!staging) {
    return staging.error();
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
  bool attached = false;
  auto device = attach_block_image(*image, attach_setup(rec.mutable_parameters), attached, what);
  if (!device) {
    return device.error();
  }
  mounts_.count(rec.name); // a copy of the image that runs meanwhile is not vouched for
  if (attached) {
    spdlog::info("{}: attached {}", what, *device);
  }
  auto fail = [&](caf::error err) -> caf::expected<std::string> {
    if (attached) {
      detach_loop_device(*device); // leave nothing attached that no record knows
    }
    return err;
  };
  // A device attached anew (after an unstage, a reboot) has the kernel's defaults.
  if (auto err = apply_block_parameters(*device, rec.mutable_parameters, what)) {
    return fail(std::move(err));
  }
  if (req.block) {
    return device;
  }
  auto mounts = read_mountinfo();
  if (!mounts) {
    return fail(mounts.error());
  }
  if (auto here = mounts_at(*mounts, *staging); !here.empty()) {
    if (block_origins(*mounts, *device, "").owns(*here.back())) {
      return device; // staged there already (a retry, or a stage whose commit was lost)
    }
    return fail(make_error(ec::failed_precondition,
                           what + ": staging path " + *staging + " already has a mount of "
                             + here.back()->source + " (" + here.back()->fstype
                             + ") that is not this volume's; berth leaves it alone"));
  }
  if (auto formatted = format_if_blank(rec.name, *device, fs_type); !formatted) {
    return fail(formatted.error());
  }
  std::error_code ec_dir;
  fs::create_directories(*staging, ec_dir);
  if (ec_dir) {
    return fail(make_error(ec::backend_failure, what + ": cannot create staging path "
                                                  + *staging + ": " + ec_dir.message()));
  }
  if (auto err = mount_block_device(*device, *staging, fs_type, opts, what)) {
    return fail(std::move(err));
  }
  spdlog::info("{}: staged {} ({}) at {}", what, *device, fs_type, *staging);
  return device;
}

caf::error block_backend::unstage(const volume_record& rec) {
  auto image = checked_image(rec);
  if (!image) {
    return image.error();
  }
  const std::string what = block_what(rec);
  auto device = find_loop_device(*image);
  if (!device) {
    return device.error();
  }
  if (!rec.staging_path.empty()) {
    auto staging = node_path(rec.staging_path, "staging path", what);
    if (!staging) {
      return staging.error();
    }
    auto mounts = read_mountinfo();
    if (!mounts) {
      return mounts.error();
    }
    bool covered = false;
    if (auto err = unmount_block_mounts(*staging, block_origins(*mounts, *device, ""), covered,
                                        false, what)) {
      return err;
    }
    if (covered) {
      return make_error(ec::failed_precondition,
                        what + ": staging path " + *staging + " has a foreign mount on top of "
                          + "this volume's; berth leaves it alone: unmount it, then unstage again");
    }
  }
  if (!device->empty()) {
    if (auto err = detach_loop_device(*device)) {
      return err;
    }
    spdlog::info("{}: detached {}", what, *device);
  }
  return {};
}

caf::error block_backend::sweep_staging(const volume_record& rec, const std::string& path) {
  auto view = view_at(rec, path, "staging path");
  if (!view) {
    return view.error();
  }
  if (view->device.empty()) {
    return {}; // no loop device backs the image: nothing anywhere comes from this volume
  }
  const auto& what = view->what;
  const auto& device = view->device;
  bool covered = false;
  if (auto err = unmount_block_mounts(view->path, block_origins(view->mounts, device, ""),
                                      covered, false, what)) {
    return err;
  }
  if (!rec.staging_path.empty()) {
    return {}; // the recorded staging still uses the device
  }
  if (auto err = detach_loop_device(device)) {
    return err;
  }
  spdlog::info("{}: detached {}, which no staging in the record uses", what, device);
  return {};
}

bool block_backend::attaches_with_direct_io(const volume_record& rec) const {
  return wants_direct_io(rec.mutable_parameters);
}

loop_setup block_backend::attach_setup(const option_map& parameters) const {
  loop_setup setup;
  setup.direct_io = wants_direct_io(parameters);
  setup.stats = loop_.get();
  return setup;
}

} // namespace berth
