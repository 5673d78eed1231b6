#pragma once

// Requests and records the CSI codec's tests build (csi_codec_*_test.cpp).

#include <string>

#include "protocols/csi/csi_codec.hpp"

namespace berth::csi::testing {

using mode = v1::VolumeCapability::AccessMode;

inline codec_env env() {
  codec_env e;
  e.node_id = "node-1";
  e.default_backend = "block";
  e.backends = {"block", "local"};
  return e;
}

inline v1::VolumeCapability mount_cap(const std::string& fs = "", mode::Mode m = mode::SINGLE_NODE_WRITER) {
  v1::VolumeCapability cap;
  cap.mutable_mount()->set_fs_type(fs);
  cap.mutable_access_mode()->set_mode(m);
  return cap;
}

inline v1::VolumeCapability block_cap(mode::Mode m = mode::SINGLE_NODE_WRITER) {
  v1::VolumeCapability cap;
  cap.mutable_block();
  cap.mutable_access_mode()->set_mode(m);
  return cap;
}

inline v1::CreateVolumeRequest create_req(const std::string& name = "pvc-1") {
  v1::CreateVolumeRequest req;
  req.set_name(name);
  *req.add_volume_capabilities() = mount_cap("xfs");
  return req;
}

inline volume_record rec(const std::string& name, record_kind kind,
                         const content_source& source = {}) {
  volume_record r;
  r.name = name;
  r.kind = kind;
  r.source = source;
  r.backend = "block";
  return r;
}

} // namespace berth::csi::testing
