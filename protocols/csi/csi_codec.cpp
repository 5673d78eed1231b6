// The CSI codec's field and capability checks. Controller requests:
// csi_codec_controller.cpp; pagination and node requests: csi_codec_node.cpp.

#include "protocols/csi/csi_codec.hpp"

#include "core/limits.hpp"
#include "core/names.hpp"
#include "core/text.hpp"
#include "protocols/csi/detail/codec_common.hpp"
#include "protocols/csi/status.hpp"

namespace berth::csi {

using namespace detail;

// -- fields -----------------------------------------------------------------------

std::string topology_key(const std::string& driver_name) {
  return "topology." + driver_name + "/node";
}

grpc::Status require(const std::string& value, const char* field) {
  if (value.empty()) {
    return invalid_argument(std::string{field} + " is required");
  }
  return grpc::Status::OK;
}

grpc::Status check_path(const std::string& path, const char* field) {
  if (auto st = require(path, field); !st.ok()) {
    return st;
  }
  auto bad = [&](const std::string& why) {
    return invalid_argument(std::string{field} + " " + quote_input(path) + " " + why);
  };
  if (path.size() > limits::max_path_bytes) {
    return bad("is " + std::to_string(path.size()) + " bytes long; at most "
               + std::to_string(limits::max_path_bytes) + " are allowed");
  }
  if (path.find('\0') != std::string::npos || has_control_char(path)) {
    return bad("contains a NUL or control character");
  }
  if (path.front() != '/') {
    return bad("is not an absolute path");
  }
  if (path == "/") {
    return bad("is the root directory");
  }
  if (path.back() == '/') {
    return bad("is not normalized (trailing \"/\")");
  }
  size_t start = 1;
  while (start <= path.size()) {
    auto end = path.find('/', start);
    if (end == std::string::npos) {
      end = path.size();
    }
    auto part = path.substr(start, end - start);
    if (part.empty()) {
      return bad("is not normalized (empty component)");
    }
    if (part == "." || part == "..") {
      return bad("is not normalized (\".\" or \"..\" component)");
    }
    start = end + 1;
  }
  return grpc::Status::OK;
}

bool may_exist(const std::string& id) {
  return is_valid_volume_name(id);
}

namespace {

/// check_parameters and check_mutable_parameters: the same per-entry bounds; only
/// what counts toward limits::max_options differs (`every_entry`: all of them).
grpc::Status check_map(const google::protobuf::Map<std::string, std::string>& params,
                       const char* field, bool every_entry) {
  size_t kept = 0;
  for (const auto& [key, value] : params) {
    if (key.empty()) {
      return invalid_argument(std::string{field} + " has an empty key");
    }
    if (key.size() > limits::max_option_key_bytes) {
      return invalid_argument(std::string{field} + " key " + quote_input(key) + " is "
                              + std::to_string(key.size()) + " bytes long; at most "
                              + std::to_string(limits::max_option_key_bytes)
                              + " are allowed");
    }
    if (value.size() > limits::max_option_value_bytes) {
      return invalid_argument(std::string{field} + " " + quote_input(key) + " has a value of "
                              + std::to_string(value.size()) + " bytes; at most "
                              + std::to_string(limits::max_option_value_bytes)
                              + " are allowed");
    }
    bool dropped = key == "backend" || key.rfind(reserved_prefix, 0) == 0;
    kept += every_entry || !dropped ? 1 : 0;
  }
  if (kept > limits::max_options) {
    return invalid_argument(std::string{field} + " has " + std::to_string(kept) + " entries"
                            + (every_entry ? std::string{}
                                           : std::string{" (besides backend and "}
                                               + reserved_prefix + "*)")
                            + "; at most " + std::to_string(limits::max_options)
                            + " are allowed");
  }
  return grpc::Status::OK;
}

} // namespace

grpc::Status check_parameters(const google::protobuf::Map<std::string, std::string>& params,
                              const char* field) {
  return check_map(params, field, false);
}

grpc::Status check_mutable_parameters(
  const google::protobuf::Map<std::string, std::string>& params, const char* field) {
  return check_map(params, field, true);
}

grpc::Status check_name(const std::string& name, const char* field, const char* what) {
  if (auto st = require(name, field); !st.ok()) {
    return st;
  }
  if (name.size() > limits::max_name_bytes) {
    return invalid_argument(std::string{field} + " " + quote_input(name) + " is "
                            + std::to_string(name.size()) + " bytes long; a " + what
                            + " name has at most " + std::to_string(limits::max_name_bytes));
  }
  if (!is_valid_volume_name(name)) {
    return invalid_argument(std::string{field} + " " + quote_input(name) + " is not a valid " + what
                            + " name (" + volume_name_grammar + ")");
  }
  return grpc::Status::OK;
}

// -- capabilities -----------------------------------------------------------------

grpc::Status check_mount_flags(const google::protobuf::RepeatedPtrField<std::string>& flags) {
  if (static_cast<size_t>(flags.size()) > limits::max_mount_flags) {
    return invalid_argument("volume_capability.mount.mount_flags has "
                            + std::to_string(flags.size()) + " flags; at most "
                            + std::to_string(limits::max_mount_flags) + " are allowed");
  }
  for (const auto& flag : flags) {
    if (flag.size() > limits::max_mount_flag_bytes) {
      return invalid_argument("mount flag " + quote_input(flag) + " is "
                              + std::to_string(flag.size()) + " bytes long; at most "
                              + std::to_string(limits::max_mount_flag_bytes) + " are allowed");
    }
    if (has_control_char(flag)) {
      return invalid_argument("mount flag " + quote_input(flag)
                              + " contains a NUL or control character");
    }
    if (flag.empty() || flag.find(',') != std::string::npos) {
      return invalid_argument("mount flag " + quote_input(flag)
                              + " is invalid: one non-empty flag per entry, no \",\"");
    }
  }
  return grpc::Status::OK;
}

grpc::Status check_capability(const v1::VolumeCapability& cap, const std::string& backend) {
  if (!cap.has_access_mode() || cap.access_mode().mode() == mode::UNKNOWN) {
    return invalid_argument("volume capability has no access mode");
  }
  switch (cap.access_mode().mode()) {
    case mode::SINGLE_NODE_WRITER:
    case mode::SINGLE_NODE_READER_ONLY:
    case mode::SINGLE_NODE_SINGLE_WRITER:
    case mode::SINGLE_NODE_MULTI_WRITER:
      break;
    default:
      return invalid_argument(std::string{"access mode "} + mode_name(cap.access_mode().mode())
                              + " is not supported: berth volumes are local to one node");
  }
  switch (cap.access_type_case()) {
    case v1::VolumeCapability::kBlock:
      if (!backend.empty() && backend != backend_block) {
        return invalid_argument("block access needs backend \"block\", not "
                                + quote_input(backend));
      }
      return grpc::Status::OK;
    case v1::VolumeCapability::kMount: {
      const auto& m = cap.mount();
      const auto& fs = m.fs_type();
      if (!fs.empty() && fs != "xfs" && fs != "ext4") {
        return invalid_argument("fs_type " + quote_input(fs)
                                + " is not supported: use xfs or ext4");
      }
      if (!m.volume_mount_group().empty()) {
        return invalid_argument("volume_mount_group is not supported (no VOLUME_MOUNT_GROUP)");
      }
      return check_mount_flags(m.mount_flags());
    }
    default:
      return invalid_argument("volume capability has neither mount nor block access type");
  }
}

grpc::Status check_capabilities(
  const google::protobuf::RepeatedPtrField<v1::VolumeCapability>& caps,
  const std::string& backend) {
  if (caps.empty()) {
    return invalid_argument("volume_capabilities is required");
  }
  for (const auto& cap : caps) {
    if (auto st = check_capability(cap, backend); !st.ok()) {
      return st;
    }
  }
  return grpc::Status::OK;
}

} // namespace berth::csi
