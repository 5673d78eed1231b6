// block_backend, modifications: which mutable parameters it takes (validate_mutable),
// and modify, one call for a new size and new parameters (the coalesced result of
// ControllerExpandVolume and ControllerModifyVolume).

#include "backends/block_backend.hpp"

#include <algorithm>

#include <spdlog/spdlog.h>

#include "backends/detail/block_helpers.hpp"
#include "backends/detail/block_image.hpp"
#include "backends/detail/block_parameters.hpp"
#include "backends/loop_device.hpp"
#include "core/errors.hpp"
#include "core/limits.hpp"
#include "core/names.hpp"

namespace berth {

namespace {

/// A Docker volume whose filesystem could not grow under its containers (ext4 without
/// CAP_SYS_RESOURCE): the image and its loop device go back to `old_size`, so the failed
/// resize changed nothing and the record's size stays true. Only while the filesystem still
/// fits in `old_size`; else the growth stays, and a retry finishes it.
void take_back_growth(const std::string& image, const std::string& device,
                      const std::string& mountpoint, uint64_t old_size, const std::string& what) {
  auto fs = block_statvfs(mountpoint, what);
  if (!fs || static_cast<uint64_t>(fs->f_blocks) * fs->f_frsize > old_size) {
    spdlog::warn("{}: its image stays grown: the filesystem at {} {}", what, mountpoint,
                 fs ? "grew past the old size" : "cannot be measured");
    return;
  }
  caf::error err = shrink_block_image(image, old_size, what);
  if (!err && !device.empty()) {
    err = refresh_loop_capacity(device);
  }
  if (err) {
    spdlog::error("{}: could not take its image back to {} bytes: {}", what, old_size,
                  describe(err));
    return;
  }
  spdlog::info("{}: image back to {} bytes, as its filesystem could not grow", what, old_size);
}

} // namespace

caf::error block_backend::validate_mutable(const std::string& volume,
                                           const option_map& parameters) const {
  if (!is_valid_volume_name(volume)) {
    return make_error(ec::invalid_argument, invalid_name_message("volume", volume));
  }
  const std::string what = "volume " + volume;
  if (parameters.size() > limits::max_options) {
    return make_error(ec::invalid_argument,
                      what + ": " + std::to_string(parameters.size())
                        + " mutable parameters, at most " + std::to_string(limits::max_options));
  }
  for (const auto& [key, value] : parameters) {
    if (key.empty()) {
      return make_error(ec::invalid_argument, what + ": a mutable parameter has an empty key");
    }
    if (key.size() > limits::max_option_key_bytes) {
      return make_error(ec::invalid_argument,
                        what + ": a mutable parameter key of " + std::to_string(key.size())
                          + " bytes (at most " + std::to_string(limits::max_option_key_bytes)
                          + ")");
    }
    if (value.size() > limits::max_option_value_bytes) {
      return make_error(ec::invalid_argument,
                        what + ": mutable parameter " + key + " has a value of "
                          + std::to_string(value.size()) + " bytes (at most "
                          + std::to_string(limits::max_option_value_bytes) + ")");
    }
    if (is_block_creation_key(key)) {
      return make_error(ec::invalid_argument,
                        what + ": \"" + key + "\" is fixed at creation and cannot be modified "
                          + "(the block backend's mutable parameters are " + block_mutable_keys
                          + ")");
    }
    if (!is_block_mutable_key(key)) {
      return make_error(ec::invalid_argument,
                        what + ": unknown mutable parameter \"" + key
                          + "\" (the block backend's mutable parameters are "
                          + block_mutable_keys + ")");
    }
    if (auto err = check_block_parameter(key, value, what)) {
      return err;
    }
  }
  return {};
}

caf::error block_backend::modify(const volume_record& rec, const modification& m) {
  auto image = checked_image(rec);
  if (!image) {
    return image.error();
  }
  const std::string what = block_what(rec);
  if (rec.kind == record_kind::snapshot) {
    return make_error(ec::invalid_argument, what + ": a snapshot cannot be modified");
  }
  if (auto err = validate_mutable(rec.name, m.parameters)) {
    return err;
  }
  auto size = block_image_size(*image);
  if (!size) {
    return make_error(ec::not_found, what + ": " + describe(size.error()));
  }
  if (m.bytes != 0 && m.bytes < *size) {
    return make_error(ec::out_of_range, what + ": cannot shrink from " + std::to_string(*size)
                                          + " to " + std::to_string(m.bytes) + " bytes");
  }
  // What the volume has: its record's parameters, and over them what modifications
  // since start applied (a retry after a modify whose record was not committed).
  // A call that asks for nothing more is a retry: the cooldown does not refuse it.
  option_map have = rec.mutable_parameters;
  for (const auto& [key, value] : cooldown_.applied(rec.name)) {
    have[key] = value;
  }
  const bool changes = m.bytes > *size
                       || std::any_of(m.parameters.begin(), m.parameters.end(),
                                      [&](const auto& kv) {
                                        auto it = have.find(kv.first);
                                        return it == have.end() || it->second != kv.second;
                                      });
  if (changes) {
    if (auto err = cooldown_.check(rec.name, what)) {
      return err;
    }
  }
  auto device = find_loop_device(*image);
  if (!device) {
    return device.error();
  }
  option_map before;
  if (device->empty()) {
    // Applied by the next stage, from the record; refuse now what it could not apply.
    if (auto err = probe_block_parameters(*image, m.parameters, what)) {
      return err;
    }
  } else {
    auto now = block_parameters_of(*device, m.parameters, what);
    if (!now) {
      return now.error();
    }
    before = std::move(*now);
    if (auto err = apply_block_parameters(*device, m.parameters, what)) {
      return err;
    }
  }
  if (m.bytes != 0) {
    auto err = expand(rec, m.bytes);
    if (!err && !rec.staging_path.empty() && !rec.staged_block) {
      auto grown = grow_filesystem(rec);
      if (!grown) {
        err = std::move(grown.error());
      }
    } else if (!err && rec.mounted && owner_of(rec) == record_owner::docker) {
      // Online, under the running containers; unmounted, the next first Mount grows it.
      auto grown = grow_mounted(rec, mountpoint(rec));
      if (!grown) {
        err = std::move(grown.error());
        take_back_growth(*image, *device, mountpoint(rec), *size, what);
      }
    }
    if (err) {
      // The parameters are taken back. The size is only where no filesystem grew into
      // it (above); elsewhere a retry finishes the growth.
      if (!device->empty()) {
        if (auto undo = apply_block_parameters(*device, before, what)) {
          spdlog::error("{}: could not put its parameters back after a failed modify: {}", what,
                        describe(undo));
        }
      }
      return err;
    }
  }
  // Every success counts, a retry too: it may have finished what a failed call began.
  cooldown_.record(rec.name, m.parameters);
  std::string applied;
  for (const auto& [key, value] : m.parameters) {
    applied += (applied.empty() ? "" : ", ") + key + "=" + value;
  }
  spdlog::info("{} modified (size {} bytes{}{}){}", what, std::max(m.bytes, *size),
               applied.empty() ? "" : ", ", applied,
               device->empty() ? (applied.empty() ? "" : "; parameters apply at stage")
                               : " on " + *device);
  return {};
}

} // namespace berth
