// block_backend, controller side: names and paths, validation, capacity, create and remove.

#include "backends/block_backend.hpp"

#include <algorithm>
#include <filesystem>

#include <spdlog/spdlog.h>
#include <sys/stat.h>

#include "backends/detail/block_helpers.hpp"
#include "backends/detail/block_image.hpp"
#include "backends/detail/block_parameters.hpp"
#include "backends/loop_device.hpp"
#include "backends/mountinfo.hpp"
#include "core/errors.hpp"
#include "core/names.hpp"

namespace fs = std::filesystem;

namespace berth {

namespace {

caf::error invalid_name(const std::string& name) {
  return make_error(ec::invalid_argument, invalid_name_message("volume", name));
}

} // namespace

block_backend::block_backend(std::string state_dir, std::chrono::milliseconds helper_timeout,
                             block_space space, std::string kubelet_dir,
                             cooldown_config cooldown, std::shared_ptr<loop_stats> loop)
  : helper_timeout_(helper_timeout), kubelet_dir_(std::move(kubelet_dir)),
    reserve_path_(std::move(space.reserve_path)), reserve_bytes_(space.reserve_bytes),
    cooldown_(std::move(cooldown)), loop_(std::move(loop)) {
  auto dir = space.block_dir.empty() ? state_dir + "/block" : space.block_dir;
  // /sys/block/loop*/loop/backing_file and mountinfo show resolved paths.
  std::error_code err;
  fs::path root = fs::weakly_canonical(fs::absolute(dir), err);
  root_ = (err ? fs::path(dir) : root).string();
}

block_backend* block_backend_of(const std::map<std::string, std::shared_ptr<backend>>& backends) {
  auto it = backends.find("block");
  return it == backends.end() ? nullptr : dynamic_cast<block_backend*>(it->second.get());
}

std::string block_backend::name() const {
  return "block";
}

std::string block_backend::image_path(record_kind kind, const std::string& name) const {
  if (!is_valid_volume_name(name)) {
    return {};
  }
  if (kind == record_kind::volume) {
    return root_ + "/volumes/" + name + ".img";
  }
  if (kind == record_kind::snapshot) {
    return root_ + "/snapshots/" + name + ".img";
  }
  return {};
}

std::string block_backend::image_path(const volume_record& rec) const {
  return image_path(rec.kind, rec.name);
}

std::vector<std::string> block_backend::image_dirs() const {
  return {root_ + "/volumes", root_ + "/snapshots"};
}

caf::expected<std::string> block_backend::checked_image(const volume_record& rec) const {
  if (!is_valid_volume_name(rec.name)) {
    return invalid_name(rec.name);
  }
  auto path = image_path(rec);
  if (path.empty()) {
    return make_error(ec::invalid_argument, "volume " + rec.name + ": unknown kind \""
                                              + to_string(rec.kind) + "\" (volume or snapshot)");
  }
  return path;
}

caf::expected<std::string> block_backend::source_image(const content_source& source,
                                                       const std::string& what) const {
  auto path = image_path(source.kind, source.name);
  if (path.empty()) {
    return make_error(ec::invalid_argument, what + ": invalid source \"" + source.describe()
                                              + "\" (expected snapshot:NAME or volume:NAME)");
  }
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) {
    return make_error(ec::not_found, what + ": source " + to_string(source.kind) + " " + source.name
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
      if (auto err = check_block_fs_type(value.empty() ? "xfs" : value, "volume " + volume)) {
        return err;
      }
    } else if (key == "backend") {
      if (value != "block") {
        return make_error(ec::invalid_argument,
                          "volume " + volume + ": parameter backend=\"" + value
                            + "\" does not name this backend (block)");
      }
    } else if (is_block_mutable_key(key)) {
      return make_error(ec::invalid_argument,
                        "volume " + volume + ": \"" + key + "\" is a mutable parameter, not a "
                          + "creation parameter: give it with the volume's mutable parameters "
                          + "(a VolumeAttributesClass, berthctl modify)");
    } else if (!is_block_creation_key(key)) {
      return make_error(ec::invalid_argument,
                        "volume " + volume + ": unknown parameter \"" + key
                          + "\" (the block backend takes fsType, backend and "
                          + block_k8s_prefix + "*)");
    }
  }
  return {};
}

// -- capacity -----------------------------------------------------------------

bool block_backend::copies_content() const {
  return true;
}

caf::expected<uint64_t> block_backend::choose_capacity(const volume_spec& spec) const {
  const std::string what = "CreateVolume capacity";
  if (spec.kind == record_kind::snapshot) {
    auto src = source_image(spec.source, "snapshot");
    if (!src) {
      return src.error();
    }
    return block_image_size(*src); // a snapshot is exactly its volume's size
  }
  const std::string fs_type = block_fs_type(spec.parameters);
  if (auto err = check_block_fs_type(fs_type, what)) {
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
           + (spec.source.empty() ? "" : " from " + spec.source.describe()) + ", unit 1 MiB";
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
  // Before the first volume, BLOCK itself may not exist yet: ask the nearest parent.
  fs::path where = root_;
  std::error_code err;
  while (!fs::exists(where, err) && where.has_parent_path() && where != where.parent_path()) {
    where = where.parent_path();
  }
  auto vfs = block_statvfs(where.string(), "GetCapacity");
  if (!vfs) {
    return vfs.error();
  }
  auto free = static_cast<uint64_t>(vfs->f_bavail) * vfs->f_frsize;
  if (reserve_bytes_ == 0 || reserve_path_.empty()) {
    return free;
  }
  struct stat images {};
  struct stat reserve_dir {};
  auto parent = fs::path(reserve_path_).parent_path().string();
  if (::stat(where.c_str(), &images) != 0 || ::stat(parent.c_str(), &reserve_dir) != 0
      || images.st_dev != reserve_dir.st_dev) {
    return free;
  }
  // The reserve's allocated blocks are already missing from f_bavail; what it lacks is not.
  uint64_t held = 0;
  struct stat reserve {};
  if (::stat(reserve_path_.c_str(), &reserve) == 0) {
    held = static_cast<uint64_t>(reserve.st_blocks) * 512;
  }
  auto missing = held >= reserve_bytes_ ? 0 : reserve_bytes_ - held;
  return free > missing ? free - missing : 0;
}

// -- create and remove --------------------------------------------------------

namespace {

/// An image already at `image` whose size is not the record's: another volume's leftover,
/// never resized into this one.
caf::error other_size(const std::string& what, const std::string& image, uint64_t size,
                      uint64_t wanted) {
  return make_error(ec::already_exists, what + ": image " + image + " exists with "
                                          + std::to_string(size) + " bytes, not "
                                          + std::to_string(wanted));
}

} // namespace

caf::error block_backend::create(const volume_record& rec) {
  if (rec.kind == record_kind::snapshot || !rec.source.empty()) {
    auto copied = create_copy(rec);
    return copied ? caf::error{} : copied.error();
  }
  auto image = checked_image(rec);
  if (!image) {
    return image.error();
  }
  const std::string what = block_what(rec);
  if (rec.capacity_bytes == 0) {
    return make_error(ec::invalid_argument, what + ": a block volume needs a capacity");
  }
  const bool docker = owner_of(rec) == record_owner::docker;
  if (auto existing = block_image_size(*image)) {
    if (*existing == rec.capacity_bytes) {
      // Made before (a retry, or a crash before the record was saved).
      return docker ? prepare_docker_volume(rec, *image) : caf::error{};
    }
    return other_size(what, *image, *existing, rec.capacity_bytes);
  }
  if (auto err = create_sparse_block_image(*image, rec.capacity_bytes, what)) {
    return err;
  }
  spdlog::info("{}: created sparse image of {} bytes", what, rec.capacity_bytes);
  return docker ? prepare_docker_volume(rec, *image) : caf::error{};
}

caf::expected<std::string> block_backend::create_copy(const volume_record& rec) {
  auto image = checked_image(rec);
  if (!image) {
    return image.error();
  }
  const std::string what = block_what(rec);
  // A copy made before (a retry, or a crash before the record was saved) is kept; how its
  // source was in use then is not known now, so it is not vouched for.
  const std::string unknown = copy_crash_consistent;
  auto existing = block_image_size(*image);
  if (rec.kind == record_kind::snapshot) {
    if (rec.source.empty() || rec.source.kind != record_kind::volume) {
      return make_error(ec::invalid_argument, what + ": source \"" + rec.source.describe()
                                                + "\" must be volume:NAME");
    }
    if (existing) {
      return unknown; // a snapshot never changes
    }
    auto src = source_image(rec.source, what);
    if (!src) {
      return src.error();
    }
    auto consistency = copy_of(rec.source, *src, *image, 0, what);
    if (consistency) {
      spdlog::info("{}: copied from {} ({})", what, rec.source.describe(), *image);
    }
    return consistency;
  }
  if (rec.capacity_bytes == 0) {
    return make_error(ec::invalid_argument, what + ": a block volume needs a capacity");
  }
  const bool docker = owner_of(rec) == record_owner::docker;
  if (existing) {
    if (*existing != rec.capacity_bytes) {
      return other_size(what, *image, *existing, rec.capacity_bytes);
    }
    if (docker) {
      if (auto err = prepare_docker_copy(rec, *image)) {
        return err;
      }
    }
    return unknown;
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
                                          + " bytes is smaller than its source "
                                          + rec.source.describe()
                                          + " (" + std::to_string(*src_size) + " bytes)");
  }
  auto consistency = copy_of(rec.source, *src, *image, rec.capacity_bytes, what);
  if (!consistency) {
    return consistency;
  }
  spdlog::info("{}: created from {} ({} bytes)", what, rec.source.describe(), rec.capacity_bytes);
  // A Docker copy larger than its source gets its filesystem grown here, before any Mount.
  if (docker && rec.capacity_bytes > *src_size) {
    if (auto err = prepare_docker_copy(rec, *image)) {
      return err;
    }
  }
  return consistency;
}

caf::expected<std::string> block_backend::copy_of(const content_source& source,
                                                  const std::string& from,
                                                  const std::string& image, uint64_t min_size,
                                                  const std::string& what) {
  auto attached = [&from] {
    auto device = find_loop_device(from);
    return !device || !device->empty(); // unreadable counts as attached: nothing is vouched
  };
  const auto mounts_before = mounts_.of(source.name);
  const bool attached_before = attached();
  auto consistency = copy_block_image(from, image, min_size, helper_timeout_, what);
  if (consistency && consistency->empty() && source.kind == record_kind::volume
      && (mounts_.of(source.name) != mounts_before || (attached() && !attached_before))) {
    return std::string{copy_crash_consistent}; // attached or mounted during the copy
  }
  return consistency;
}

caf::error block_backend::remove(const volume_record& rec) {
  auto image = checked_image(rec);
  if (!image) {
    return image.error();
  }
  const std::string what = block_what(rec);
  auto device = find_loop_device(*image);
  if (!device) {
    return device.error();
  }
  if (!device->empty()) {
    auto points = block_mounts_of(*device);
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
  cooldown_.forget(rec.name); // a volume made later under this name is another one
  if (auto mp = mountpoint(rec); !mp.empty()) {
    std::error_code gone;
    fs::remove(mp, gone); // an empty directory only: a mount on it makes this fail
  }
  spdlog::info("{}: deleted {}", what, *image);
  return {};
}

} // namespace berth
