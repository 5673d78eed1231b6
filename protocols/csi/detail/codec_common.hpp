#pragma once

// What the CSI codec's files (csi_codec.cpp, csi_codec_controller.cpp,
// csi_codec_node.cpp) share: the backend names it knows rules for, the CO's parameter
// prefix, and two conversions.

#include <cstdint>

#include "protocols/csi/csi_codec.hpp"

namespace berth::csi::detail {

/// The backend names the codec knows rules for.
inline constexpr const char* backend_block = "block";
inline constexpr const char* backend_local = "local";

/// Parameters with this prefix are the CO's (external-provisioner's
/// --extra-create-metadata, fstype, secrets): not volume options.
inline constexpr const char* reserved_prefix = "csi.storage.k8s.io/";

using mode = v1::VolumeCapability::AccessMode;

inline int64_t to_int64(uint64_t x) {
  return x > static_cast<uint64_t>(INT64_MAX) ? INT64_MAX : static_cast<int64_t>(x);
}

inline const char* mode_name(int m) {
  return v1::VolumeCapability::AccessMode::Mode_IsValid(m)
           ? v1::VolumeCapability::AccessMode::Mode_Name(
               static_cast<v1::VolumeCapability::AccessMode::Mode>(m))
               .c_str()
           : "an unknown mode";
}

} // namespace berth::csi::detail
