#include "apps/bench/csi_client.hpp"

#include <cstdio>

namespace berth::bench {

namespace v1 = ::csi::v1;

csi_client::csi_client(const std::string& endpoint, const std::string& node_endpoint) {
  grpc::ChannelArguments args;
  args.SetInt(GRPC_ARG_USE_LOCAL_SUBCHANNEL_POOL, 1);
  channel = grpc::CreateCustomChannel(endpoint, grpc::InsecureChannelCredentials(), args);
  node_channel = node_endpoint.empty() || node_endpoint == endpoint
                   ? channel
                   : grpc::CreateCustomChannel(node_endpoint, grpc::InsecureChannelCredentials(), args);
  controller = v1::Controller::NewStub(channel);
  node = v1::Node::NewStub(node_channel);
}

bool controller_capabilities(const std::string& endpoint,
                             v1::ControllerGetCapabilitiesResponse& caps) {
  csi_client probe(endpoint);
  auto err = rpc(*probe.controller, &v1::Controller::Stub::ControllerGetCapabilities,
                 v1::ControllerGetCapabilitiesRequest{}, caps);
  if (!err.empty()) {
    std::fprintf(stderr, "berth-bench: ControllerGetCapabilities on %s failed: %s\n",
                 endpoint.c_str(), err.c_str());
    return false;
  }
  return true;
}

v1::VolumeCapability mount_capability() {
  v1::VolumeCapability cap;
  cap.mutable_mount();
  cap.mutable_access_mode()->set_mode(v1::VolumeCapability::AccessMode::SINGLE_NODE_WRITER);
  return cap;
}

v1::CreateVolumeRequest create_request(const std::string& name, int64_t bytes,
                                       const std::string& backend) {
  v1::CreateVolumeRequest req;
  req.set_name(name);
  req.mutable_capacity_range()->set_required_bytes(bytes);
  *req.add_volume_capabilities() = mount_capability();
  if (!backend.empty()) {
    (*req.mutable_parameters())["backend"] = backend;
  }
  return req;
}

} // namespace berth::bench
