#include "apps/controller/cluster_services.hpp"

namespace berth::controller {

cluster_identity::cluster_identity(std::string driver_name, std::string version)
  : name_(std::move(driver_name)), version_(std::move(version)) {
}

grpc::Status cluster_identity::GetPluginInfo(grpc::ServerContext*, const v1::GetPluginInfoRequest*,
                                             v1::GetPluginInfoResponse* resp) {
  resp->set_name(name_);
  resp->set_vendor_version(version_);
  return grpc::Status::OK;
}

grpc::Status cluster_identity::GetPluginCapabilities(grpc::ServerContext*,
                                                     const v1::GetPluginCapabilitiesRequest*,
                                                     v1::GetPluginCapabilitiesResponse* resp) {
  using service = v1::PluginCapability::Service;
  for (auto type : {service::CONTROLLER_SERVICE, service::VOLUME_ACCESSIBILITY_CONSTRAINTS}) {
    resp->add_capabilities()->mutable_service()->set_type(type);
  }
  resp->add_capabilities()->mutable_volume_expansion()->set_type(
    v1::PluginCapability::VolumeExpansion::ONLINE);
  return grpc::Status::OK;
}

grpc::Status cluster_identity::Probe(grpc::ServerContext*, const v1::ProbeRequest*,
                                     v1::ProbeResponse* resp) {
  // Ready once serving: every RPC asks the API server itself and says when it cannot.
  resp->mutable_ready()->set_value(true);
  return grpc::Status::OK;
}

} // namespace berth::controller
