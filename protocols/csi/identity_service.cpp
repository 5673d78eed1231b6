#include "protocols/csi/csi_services.hpp"

namespace berth::csi {

codec_env make_codec_env(const csi_config& cfg) {
  codec_env env;
  env.driver_name = cfg.driver_name;
  env.node_id = cfg.node_id;
  env.default_backend = cfg.default_backend;
  for (const auto& [name, ignored] : cfg.backends) {
    env.backends.insert(name);
  }
  return env;
}

identity_service::identity_service(const csi_config& cfg)
    : name_(cfg.driver_name), version_(cfg.version), serves_controller_(cfg.serve_controller),
      serves_snapshot_metadata_(cfg.directory != nullptr && cfg.advertise_since_1_10),
      stats_(cfg.stats) {}

grpc::ServerUnaryReactor* identity_service::GetPluginInfo(grpc::CallbackServerContext*,
                                                          const v1::GetPluginInfoRequest*,
                                                          v1::GetPluginInfoResponse* resp) {
  resp->set_name(name_);
  resp->set_vendor_version(version_);
  return finish_now(start(stats_, "GetPluginInfo"), grpc::Status::OK);
}

grpc::ServerUnaryReactor*
identity_service::GetPluginCapabilities(grpc::CallbackServerContext*,
                                        const v1::GetPluginCapabilitiesRequest*,
                                        v1::GetPluginCapabilitiesResponse* resp) {
  using service = v1::PluginCapability::Service;
  if (serves_controller_) {
    resp->add_capabilities()->mutable_service()->set_type(service::CONTROLLER_SERVICE);
  }
  resp->add_capabilities()->mutable_service()->set_type(service::VOLUME_ACCESSIBILITY_CONSTRAINTS);
  if (serves_snapshot_metadata_) {
    // csi_server registers it whenever a record directory is configured.
    resp->add_capabilities()->mutable_service()->set_type(service::SNAPSHOT_METADATA_SERVICE);
  }
  resp->add_capabilities()->mutable_volume_expansion()->set_type(
    v1::PluginCapability::VolumeExpansion::ONLINE);
  return finish_now(start(stats_, "GetPluginCapabilities"), grpc::Status::OK);
}

grpc::ServerUnaryReactor* identity_service::Probe(grpc::CallbackServerContext*,
                                                  const v1::ProbeRequest*,
                                                  v1::ProbeResponse* resp) {
  // berthd serves CSI only after its state is loaded and reconciled.
  resp->mutable_ready()->set_value(true);
  return finish_now(start(stats_, "Probe"), grpc::Status::OK);
}

} // namespace berth::csi
