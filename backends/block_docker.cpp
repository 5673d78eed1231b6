// block_backend, Docker volumes (`docker volume create -d berth -o backend=block -o size=`):
// a sparse image, formatted at create; the first Mount attaches it to a loop device and
// mounts its filesystem at BLOCK/mounts/NAME, the last Unmount unmounts it and detaches
// the device. The record's counts decide first and last (the volume actor), so here
// every call is idempotent: mounted already is success, and so is not mounted.

#include "backends/block_backend.hpp"

#include <filesystem>

#include <spdlog/spdlog.h>

#include "backends/detail/block_helpers.hpp"
#include "backends/detail/block_mounts.hpp"
#include "backends/detail/block_offline_resize.hpp"
#include "backends/detail/root_ownership.hpp"
#include "backends/loop_device.hpp"
#include "core/byte_size.hpp"
#include "core/docker_source.hpp"
#include "core/errors.hpp"
#include "core/names.hpp"
#include "core/text.hpp"

namespace fs = std::filesystem;

namespace berth {

namespace {

const char* const docker_keys = "backend, size, fstype, uid, gid, mode, from-snapshot, clone-of";

caf::error invalid(const std::string& message) {
  return make_error(ec::invalid_argument, message);
}

} // namespace

std::string block_backend::mountpoint(const volume_record& rec) const {
  if (rec.kind != record_kind::volume || owner_of(rec) != record_owner::docker
      || !is_valid_volume_name(rec.name)) {
    return {};
  }
  return root_ + "/mounts/" + rec.name;
}

namespace {

/// The option `key` of a block volume's `-o` options: known, and meant for this backend.
/// A copy (`copy`: from-snapshot or clone-of) takes its filesystem, owner and mode from
/// its source, so it is refused those.
caf::error check_docker_key(const std::string& volume, const std::string& key,
                            const std::string& value, bool copy) {
  const std::string option = "option " + quote_input(key) + " of volume " + volume;
  if (value.empty()) {
    return invalid(option + " is empty");
  }
  if (has_control_char(value)) {
    return invalid(option + " contains a control character");
  }
  if (key == "backend") {
    if (value != "block") {
      return invalid(option + " is " + quote_input(value) + ", not this backend (block)");
    }
  } else if (key == "type" || key == "device" || key == "o") {
    return invalid(option + " belongs to the local backend (a filesystem berth mounts); a "
                   + "block volume makes its own filesystem: give fstype=ext4 or fstype=xfs");
  } else if (key == "fstype" || key == "uid" || key == "gid" || key == "mode") {
    if (copy) {
      return invalid(option + " cannot be given with from-snapshot or clone-of: a copy keeps "
                     + "its source's filesystem, owner and mode");
    }
  } else if (key != "size" && key != docker_from_snapshot_key && key != docker_clone_of_key) {
    return invalid("unknown option " + quote_input(key) + " for volume " + volume
                   + " on backend block (allowed: " + docker_keys + ")");
  }
  return {};
}

/// The option size=`text`, rounded up to the backend's unit.
caf::expected<uint64_t> docker_size(const std::string& volume, const std::string& text) {
  auto size = parse_byte_size(text);
  if (size.problem == size_problem::not_a_size) {
    return invalid("option size=" + quote_input(text) + " of volume " + volume
                   + " is not a size: " + byte_size_grammar);
  }
  if (size.problem == size_problem::zero) {
    return invalid("option size=" + quote_input(text) + " of volume " + volume
                   + " must be positive");
  }
  if (size.problem == size_problem::too_large
      || size.bytes > UINT64_MAX - block_backend::unit_bytes) {
    return invalid("option size=" + quote_input(text) + " of volume " + volume + " is too large");
  }
  return (size.bytes + block_backend::unit_bytes - 1) / block_backend::unit_bytes
         * block_backend::unit_bytes;
}

} // namespace

caf::expected<uint64_t> block_backend::validate_docker(const std::string& volume,
                                                       const option_map& options) const {
  if (!is_valid_volume_name(volume)) {
    return invalid(invalid_name_message("volume", volume));
  }
  auto source = docker_content_source(volume, options);
  if (!source) {
    return source.error();
  }
  const bool copy = !source->empty();
  for (const auto& [key, value] : options) {
    if (auto err = check_docker_key(volume, key, value, copy)) {
      return err;
    }
  }
  auto size_it = options.find("size");
  if (size_it == options.end()) {
    if (copy) {
      return uint64_t{0}; // the source's size
    }
    return invalid("volume " + volume + ": a block volume needs option size (e.g. -o size=10G)");
  }
  auto bytes = docker_size(volume, size_it->second);
  if (!bytes || copy) {
    return bytes; // a copy's size is checked against its source's
  }
  const std::string fs_type = docker_block_fs_type(options);
  if (fs_type != "ext4" && fs_type != "xfs") {
    return invalid("option fstype=" + quote_input(fs_type) + " of volume " + volume
                   + " is not supported (ext4 or xfs)");
  }
  const uint64_t minimum = fs_type == "xfs" ? min_xfs_bytes : min_ext4_bytes;
  if (*bytes < minimum) {
    return make_error(ec::out_of_range,
                      "option size=" + quote_input(size_it->second) + " of volume " + volume
                        + " is below the smallest " + fs_type + " volume, "
                        + std::to_string(minimum >> 20) + "M"
                        + (fs_type == "xfs" ? " (give a larger size, or fstype=ext4)" : ""));
  }
  if (auto root = detail::parse_root_ownership(volume, options); !root) {
    return root.error();
  }
  return bytes;
}

caf::expected<uint64_t> block_backend::resize_capacity(const volume_record& rec,
                                                       uint64_t bytes) const {
  if (owner_of(rec) != record_owner::docker) {
    return backend::resize_capacity(rec, bytes);
  }
  if (bytes > UINT64_MAX - unit_bytes) {
    return make_error(ec::out_of_range, block_what(rec) + ": size " + std::to_string(bytes)
                                          + " bytes is too large");
  }
  return (bytes + unit_bytes - 1) / unit_bytes * unit_bytes;
}

caf::error block_backend::prepare_docker_volume(const volume_record& rec,
                                                const std::string& image) {
  const std::string what = block_what(rec);
  const std::string fs_type = docker_block_fs_type(rec.options);
  auto root = detail::parse_root_ownership(rec.name, rec.options);
  if (!root) {
    return root.error();
  }
  bool attached = false;
  auto device = find_or_attach_loop_device(image, attached, attach_setup());
  if (!device) {
    return device.error();
  }
  auto prepared = [&]() -> caf::error {
    auto formatted = format_if_blank(rec.name, *device, fs_type);
    if (!formatted) {
      return formatted.error();
    }
    if (!detail::names_root_ownership(rec.options)) {
      return {};
    }
    // The root is the filesystem's: it takes its owner and mode while mounted.
    const auto mp = mountpoint(rec);
    if (auto failed = mount_to_prepare(*device, mp, fs_type, what)) {
      return failed;
    }
    return detail::apply_root_ownership(rec.name, mp, *root);
  }();
  // Nothing stays attached or mounted that only a record could explain: it is not saved yet.
  auto settled = unmount_and_detach(*device, mountpoint(rec), false, what);
  return prepared ? prepared : settled;
}

caf::expected<std::string> block_backend::docker_fs_type(const volume_record& rec,
                                                        const std::string& device) {
  if (rec.source.empty()) {
    return docker_block_fs_type(rec.options);
  }
  const std::string what = block_what(rec);
  auto found = probe_filesystem(what, device);
  if (!found) {
    return found.error();
  }
  if (*found != "ext4" && *found != "xfs") {
    return make_error(ec::failed_precondition,
                      what + ": " + device + " holds " + (found->empty() ? "nothing" : *found)
                        + ", not the ext4 or xfs of its source " + rec.source.describe());
  }
  return found;
}

caf::error block_backend::prepare_docker_copy(const volume_record& rec, const std::string& image) {
  const std::string what = block_what(rec);
  bool attached = false;
  auto device = find_or_attach_loop_device(image, attached, attach_setup());
  if (!device) {
    return device.error();
  }
  const auto mp = mountpoint(rec);
  auto grown = [&]() -> caf::error {
    auto fs_type = docker_fs_type(rec, *device);
    if (!fs_type) {
      return fs_type.error();
    }
    if (*fs_type == "ext4") {
      return grow_ext4_unmounted(*device, helper_timeout_, what);
    }
    // xfs grows only while mounted.
    if (auto failed = mount_to_prepare(*device, mp, *fs_type, what)) {
      return failed;
    }
    auto size = grow_mounted(rec, mp);
    return size ? caf::error{} : size.error();
  }();
  auto settled = unmount_and_detach(*device, mp, false, what);
  return grown ? grown : settled;
}

caf::expected<std::string> block_backend::mount(const volume_record& rec) {
  auto image = checked_image(rec);
  if (!image) {
    return image.error();
  }
  const std::string what = block_what(rec);
  const auto mp = mountpoint(rec);
  if (mp.empty()) {
    return unsupported("Docker Mount of a CSI " + to_string(rec.kind)
                       + " (kubelet stages and publishes it)");
  }
  bool attached = false;
  auto device = attach_block_image(*image, attach_setup(rec.mutable_parameters), attached, what);
  if (!device) {
    return device.error();
  }
  auto fail = [&](caf::error err) -> caf::expected<std::string> {
    if (attached) {
      detach_loop_device(*device); // leave nothing attached that no record knows
    }
    return err;
  };
  auto mounts = read_mountinfo();
  if (!mounts) {
    return fail(mounts.error());
  }
  if (auto here = mounts_at(*mounts, mp); !here.empty()) {
    if (block_origins(*mounts, *device, "").owns(*here.back())) {
      return mp; // mounted already (a retry, or a mount whose commit was lost)
    }
    return fail(make_error(ec::failed_precondition,
                           what + ": " + mp + " already has a mount of " + here.back()->source
                             + " (" + here.back()->fstype
                             + ") that is not this volume's; berth leaves it alone"));
  }
  std::error_code err;
  fs::create_directories(mp, err);
  if (err) {
    return fail(make_error(ec::backend_failure,
                           what + ": cannot create " + mp + ": " + err.message()));
  }
  auto fs_type_found = docker_fs_type(rec, *device);
  if (!fs_type_found) {
    return fail(fs_type_found.error());
  }
  const auto fs_type = *fs_type_found;
  // A volume resized while unmounted has a larger image than filesystem: it grows here,
  // ext4 before its mount (online, the kernel wants CAP_SYS_RESOURCE), xfs after it
  // (xfs grows only online).
  const bool resized = rec.modifications > 0;
  if (resized && fs_type == "ext4") {
    if (auto failed = grow_ext4_unmounted(*device, helper_timeout_, what)) {
      return fail(std::move(failed));
    }
  }
  if (auto failed = mount_block_device(*device, mp, fs_type, {}, what)) {
    return fail(std::move(failed));
  }
  mounts_.count(rec.name);
  spdlog::info("{}: mounted {} ({}) at {}", what, *device, fs_type, mp);
  if (resized && fs_type == "xfs") {
    if (auto grown = grow_mounted(rec, mp); !grown) {
      spdlog::warn("{}: its filesystem keeps its size for now: {}; berthctl resize grows it",
                   what, describe(grown.error()));
    }
  }
  return mp;
}

caf::error block_backend::unmount(const volume_record& rec, bool lazy) {
  auto image = checked_image(rec);
  if (!image) {
    return image.error();
  }
  const auto mp = mountpoint(rec);
  if (mp.empty()) {
    return unsupported("Docker Unmount of a CSI " + to_string(rec.kind)
                       + " (kubelet unpublishes and unstages it)");
  }
  auto device = find_loop_device(*image);
  if (!device) {
    return device.error();
  }
  if (device->empty()) {
    return {}; // no loop device backs the image: nothing of this volume is mounted
  }
  return unmount_and_detach(*device, mp, lazy, block_what(rec));
}

} // namespace berth
