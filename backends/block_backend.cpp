#include "backends/block_backend.hpp"

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <optional>

#include <spdlog/spdlog.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/statvfs.h>

#include "backends/bind_publish.hpp"
#include "backends/detail/block_image.hpp"
#include "backends/detail/block_mount_flags.hpp"
#include "backends/detail/block_offline_resize.hpp"
#include "backends/helper_process.hpp"
#include "backends/local_options.hpp"
#include "backends/loop_device.hpp"
#include "backends/mountinfo.hpp"
#include "core/errors.hpp"
#include "core/names.hpp"

namespace fs = std::filesystem;

namespace berth {

namespace {

const std::string k8s_prefix = "csi.storage.k8s.io/";

std::string what_of(const volume_record& rec) {
  return (rec.kind == kind_snapshot ? "snapshot " : "volume ") + rec.name;
}

caf::error invalid_name(const std::string& name) {
  return make_error(ec::invalid_argument, "invalid volume name \"" + name
                                            + "\" (expected [A-Za-z0-9][A-Za-z0-9_.-]{0,127})");
}

caf::error check_fs_type(const std::string& fs_type, const std::string& what) {
  if (fs_type != "xfs" && fs_type != "ext4") {
    return make_error(ec::invalid_argument,
                      what + ": fsType \"" + fs_type + "\" is not supported (xfs or ext4)");
  }
  return {};
}

/// fsType of the parameters; xfs by default.
std::string fs_type_of(const option_map& options) {
  auto it = options.find("fsType");
  return it == options.end() || it->second.empty() ? "xfs" : it->second;
}

caf::error check_path(const std::string& path, const std::string& role, const std::string& what) {
  if (!is_clean_absolute_path(path) || path == "/") {
    return make_error(ec::invalid_argument,
                      what + ": " + role + " \"" + path + "\" is not a clean absolute path");
  }
  return {};
}

/// The topmost mount at `path`, if any.
std::optional<mount_entry> mount_at(const std::string& path) {
  auto entries = read_mountinfo();
  std::optional<mount_entry> found;
  if (entries) {
    for (auto& e : *entries) {
      if (e.mount_point == path) {
        found = std::move(e);
      }
    }
  }
  return found;
}

/// Mount points of every mount of `device`.
std::vector<std::string> mounts_of(const std::string& device) {
  std::vector<std::string> out;
  auto entries = read_mountinfo();
  if (entries) {
    for (const auto& e : *entries) {
      if (e.source == device) {
        out.push_back(e.mount_point);
      }
    }
  }
  return out;
}

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

caf::expected<uint64_t> filesystem_size(const std::string& path, const std::string& what) {
  struct statvfs vfs {};
  if (::statvfs(path.c_str(), &vfs) != 0) {
    int e = errno;
    return make_error(ec::backend_failure, what + ": statvfs of " + path + " failed: "
                                             + std::strerror(e));
  }
  return static_cast<uint64_t>(vfs.f_blocks) * vfs.f_frsize;
}

} // namespace

block_backend::block_backend(std::string state_dir, std::chrono::milliseconds helper_timeout)
  : helper_timeout_(helper_timeout) {
  // /sys/block/loop*/loop/backing_file and mountinfo show resolved paths.
  std::error_code err;
  fs::path root = fs::weakly_canonical(fs::absolute(state_dir), err);
  root_ = (err ? fs::path(state_dir) : root).string();
}

std::string block_backend::name() const {
  return "block";
}

std::string block_backend::mountpoint(const volume_record&) const {
  return {};
}

std::string block_backend::image_path(const std::string& kind, const std::string& name) const {
  if (!is_valid_volume_name(name)) {
    return {};
  }
  if (kind == kind_volume) {
    return root_ + "/block/volumes/" + name + ".img";
  }
  if (kind == kind_snapshot) {
    return root_ + "/block/snapshots/" + name + ".img";
  }
  return {};
}

std::string block_backend::image_path(const volume_record& rec) const {
  return image_path(rec.kind, rec.name);
}

caf::expected<std::string> block_backend::checked_image(const volume_record& rec) const {
  if (!is_valid_volume_name(rec.name)) {
    return invalid_name(rec.name);
  }
  auto path = image_path(rec);
  if (path.empty()) {
    return make_error(ec::invalid_argument, "volume " + rec.name + ": unknown kind \"" + rec.kind
                                              + "\" (volume or snapshot)");
  }
  return path;
}

caf::expected<std::string> block_backend::source_image(const std::string& source,
                                                       const std::string& what) const {
  auto colon = source.find(':');
  std::string kind = colon == std::string::npos ? "" : source.substr(0, colon);
  std::string name = colon == std::string::npos ? "" : source.substr(colon + 1);
  auto path = image_path(kind == "snapshot" ? kind_snapshot : kind == "volume" ? kind_volume : "",
                         name);
  if (path.empty()) {
    return make_error(ec::invalid_argument, what + ": invalid source \"" + source
                                              + "\" (expected snapshot:NAME or volume:NAME)");
  }
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) {
    return make_error(ec::not_found, what + ": source " + kind + " " + name
                                       + " not found (no image " + path + ")");
  }
  return path;
}

caf::error block_backend::validate(const std::string& volume, const option_map& options) const {
  if (!is_valid_volume_name(volume)) {
    return invalid_name(volume);
  }
  for (const auto& [key, value] : options) {
    if (key == "fsType") {
      if (auto err = check_fs_type(value.empty() ? "xfs" : value, "volume " + volume)) {
        return err;
      }
    } else if (key == "backend") {
      if (value != "block") {
        return make_error(ec::invalid_argument,
                          "volume " + volume + ": parameter backend=\"" + value
                            + "\" does not name this backend (block)");
      }
    } else if (key.compare(0, k8s_prefix.size(), k8s_prefix) != 0) {
      return make_error(ec::invalid_argument,
                        "volume " + volume + ": unknown parameter \"" + key
                          + "\" (the block backend takes fsType, backend and "
                          + k8s_prefix + "*)");
    }
  }
  return {};
}

// -- capacity -----------------------------------------------------------------

caf::expected<uint64_t> block_backend::choose_capacity(const volume_spec& spec) const {
  const std::string what = "CreateVolume capacity";
  if (spec.kind == kind_snapshot) {
    auto src = source_image(spec.source, "snapshot");
    if (!src) {
      return src.error();
    }
    return block_image_size(*src); // a snapshot is exactly its volume's size
  }
  const std::string fs_type = fs_type_of(spec.parameters);
  if (auto err = check_fs_type(fs_type, what)) {
    return err;
  }
  uint64_t minimum = fs_type == "xfs" ? min_xfs_bytes : min_ext4_bytes;
  if (!spec.source.empty()) {
    auto src = source_image(spec.source, what);
    if (!src) {
      return src.error();
    }
    auto size = block_image_size(*src);
    if (!size) {
      return size.error();
    }
    minimum = std::max(minimum, *size);
  }
  const uint64_t req = spec.required_bytes;
  const uint64_t lim = spec.limit_bytes;
  auto describe_range = [&] {
    return "required " + std::to_string(req) + " bytes, limit "
           + (lim == 0 ? std::string("none") : std::to_string(lim) + " bytes") + ", minimum "
           + std::to_string(minimum) + " bytes for " + fs_type
           + (spec.source.empty() ? "" : " from " + spec.source) + ", unit 1 MiB";
  };
  if (lim != 0 && req > lim) {
    return make_error(ec::out_of_range,
                      what + ": required exceeds limit (" + describe_range() + ")");
  }
  if (req > UINT64_MAX - unit_bytes) {
    return make_error(ec::out_of_range, what + ": too large (" + describe_range() + ")");
  }
  uint64_t want = 0;
  if (req == 0) {
    want = default_bytes;
    if (lim != 0 && want > lim) {
      want = lim / unit_bytes * unit_bytes;
    }
  } else {
    want = (req + unit_bytes - 1) / unit_bytes * unit_bytes;
  }
  want = std::max(want, (minimum + unit_bytes - 1) / unit_bytes * unit_bytes);
  if (lim != 0 && want > lim) {
    return make_error(ec::out_of_range,
                      what + ": no size fits (" + describe_range() + ")");
  }
  return want;
}

caf::expected<uint64_t> block_backend::available_capacity() const {
  struct statvfs vfs {};
  if (::statvfs(root_.c_str(), &vfs) != 0) {
    int e = errno;
    return make_error(ec::backend_failure, "GetCapacity: statvfs of " + root_ + " failed: "
                                             + std::strerror(e));
  }
  return static_cast<uint64_t>(vfs.f_bavail) * vfs.f_frsize;
}

// -- create and remove --------------------------------------------------------

caf::error block_backend::create(const volume_record& rec) {
  auto image = checked_image(rec);
  if (!image) {
    return image.error();
  }
  const std::string what = what_of(rec);
  auto existing = block_image_size(*image);
  if (rec.kind == kind_snapshot) {
    if (rec.source.compare(0, 7, "volume:") != 0) {
      return make_error(ec::invalid_argument, what + ": source \"" + rec.source
                                                + "\" must be volume:NAME");
    }
    if (existing) {
      return {}; // taken before: a snapshot never changes
    }
    auto src = source_image(rec.source, what);
    if (!src) {
      return src.error();
    }
    if (auto err = copy_block_image(*src, *image, 0, helper_timeout_, what)) {
      return err;
    }
    spdlog::info("{}: copied from {} ({})", what, rec.source, *image);
    return {};
  }
  if (rec.capacity_bytes == 0) {
    return make_error(ec::invalid_argument, what + ": a block volume needs a capacity");
  }
  if (existing) {
    if (*existing == rec.capacity_bytes) {
      return {};
    }
    return make_error(ec::already_exists, what + ": image " + *image + " exists with "
                                            + std::to_string(*existing) + " bytes, not "
                                            + std::to_string(rec.capacity_bytes));
  }
  if (rec.source.empty()) {
    if (auto err = create_sparse_block_image(*image, rec.capacity_bytes, what)) {
      return err;
    }
    spdlog::info("{}: created sparse image of {} bytes", what, rec.capacity_bytes);
    return {};
  }
  auto src = source_image(rec.source, what);
  if (!src) {
    return src.error();
  }
  auto src_size = block_image_size(*src);
  if (!src_size) {
    return src_size.error();
  }
  if (*src_size > rec.capacity_bytes) {
    return make_error(ec::out_of_range, what + ": capacity " + std::to_string(rec.capacity_bytes)
                                          + " bytes is smaller than its source " + rec.source
                                          + " (" + std::to_string(*src_size) + " bytes)");
  }
  if (auto err = copy_block_image(*src, *image, rec.capacity_bytes, helper_timeout_, what)) {
    return err;
  }
  spdlog::info("{}: created from {} ({} bytes)", what, rec.source, rec.capacity_bytes);
  return {};
}

caf::error block_backend::remove(const volume_record& rec) {
  auto image = checked_image(rec);
  if (!image) {
    return image.error();
  }
  const std::string what = what_of(rec);
  auto device = find_loop_device(*image);
  if (!device) {
    return device.error();
  }
  if (!device->empty()) {
    auto points = mounts_of(*device);
    if (!points.empty()) {
      return make_error(ec::in_use, what + ": " + *device + " is still mounted at "
                                      + points.front() + "; unstage it before deleting");
    }
    if (auto err = detach_loop_device(*device)) {
      return err;
    }
    spdlog::info("{}: detached {}", what, *device);
  }
  if (auto err = remove_block_image(*image, what)) {
    return err;
  }
  spdlog::info("{}: deleted {}", what, *image);
  return {};
}

caf::expected<std::string> block_backend::mount(const volume_record&) {
  return unsupported("Docker Mount (block volumes are CSI only)");
}

caf::error block_backend::unmount(const volume_record&, bool) {
  return unsupported("Docker Unmount (block volumes are CSI only)");
}

// -- stage and unstage --------------------------------------------------------

caf::error block_backend::format_if_blank(const std::string& volume, const std::string& device,
                                          const std::string& fs_type) {
  const std::string what = "volume " + volume;
  // blkid -p probes the device itself (no cache); exit 2: nothing found.
  std::vector<std::string> probe = {"blkid", "-p", "-o", "value", "-s", "TYPE", device};
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
                                    ? std::vector<std::string>{"mkfs.xfs", "-q", device}
                                    : std::vector<std::string>{"mkfs.ext4", "-q", "-F", device};
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
  const std::string what = what_of(rec);
  if (auto err = check_path(req.staging_path, "staging path", what)) {
    return err;
  }
  std::string fs_type = !req.fs_type.empty() ? req.fs_type : fs_type_of(rec.options);
  block_mount_options opts;
  if (!req.block) {
    if (auto err = check_fs_type(fs_type, what)) {
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
  if (auto current = mount_at(req.staging_path)) {
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
  const std::string what = what_of(rec);
  if (!rec.staging_path.empty()) {
    if (auto err = check_path(rec.staging_path, "staging path", what)) {
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
  const std::string what = what_of(rec);
  if (auto err = check_path(target, "target", what)) {
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
  const std::string what = what_of(rec);
  if (auto err = bind_unpublish(target, what)) {
    return err;
  }
  spdlog::debug("{}: unpublished {}", what, target);
  return {};
}

// -- expansion ----------------------------------------------------------------

caf::error block_backend::expand(const volume_record& rec, uint64_t bytes) {
  auto image = checked_image(rec);
  if (!image) {
    return image.error();
  }
  const std::string what = what_of(rec);
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
  const std::string what = what_of(rec);
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
  if (auto err = check_path(rec.staging_path, "staging path", what)) {
    return err;
  }
  auto mounted = mount_at(rec.staging_path);
  if (!mounted) {
    return make_error(ec::failed_precondition,
                      what + ": not staged (nothing mounted at " + rec.staging_path + ")");
  }
  const std::string device = mounted->source;
  if (is_loop_device_path(device)) {
    if (auto err = refresh_loop_capacity(device)) {
      return err;
    }
  }
  if (mounted->fstype == "xfs") {
    auto grown = run_helper_checked({"xfs_growfs", rec.staging_path}, helper_timeout_,
                                    what + ": xfs_growfs of " + rec.staging_path + " failed");
    if (!grown) {
      return grown.error();
    }
  } else if (mounted->fstype == "ext4") {
    auto grown = run_helper_checked({"resize2fs", device}, helper_timeout_,
                                    what + ": online resize2fs of " + device + " failed");
    if (!grown) {
      spdlog::warn("{}; trying offline", describe(grown.error()));
      auto opts = parse_block_mount_flags(rec.stage_flags, what);
      if (!opts) {
        return opts.error();
      }
      if (auto err = resize_ext4_offline(device, rec.staging_path, *opts, helper_timeout_, what)) {
        return err;
      }
    }
  } else {
    return make_error(ec::failed_precondition, what + ": cannot grow " + mounted->fstype + " at "
                                                 + rec.staging_path + " (xfs or ext4)");
  }
  auto size = filesystem_size(rec.staging_path, what);
  if (size) {
    spdlog::info("{}: {} at {} grown to {} bytes", what, mounted->fstype, rec.staging_path, *size);
  }
  return size;
}

// -- statistics ---------------------------------------------------------------

caf::expected<volume_stats> block_backend::stats(const volume_record& rec,
                                                 const std::string& path) {
  auto image = checked_image(rec);
  if (!image) {
    return image.error();
  }
  const std::string what = what_of(rec);
  if (auto err = check_path(path, "volume path", what)) {
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
