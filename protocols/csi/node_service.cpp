#include "protocols/csi/csi_services.hpp"

#include "backends/node_path.hpp"
#include "core/errors.hpp"

namespace berth::csi {

namespace {

grpc::Status unknown_volume(const std::string& id) {
  return not_found("volume " + quote(id) + " does not exist on this node");
}

/// volume_id required, and a name berth could know (NOT_FOUND otherwise).
grpc::Status check_volume_id(const std::string& id) {
  if (auto st = require(id, "volume_id"); !st.ok()) {
    return st;
  }
  return may_exist(id) ? grpc::Status::OK : unknown_volume(id);
}

/// What every node RPC on a path checks first: volume_id given, `path` (the field
/// `field`) absolute and normalized, and so `staging` when the request has one.
grpc::Status check_paths(const std::string& id, const std::string& path, const char* field,
                         const std::string& staging = {}) {
  if (auto st = require(id, "volume_id"); !st.ok()) {
    return st;
  }
  if (auto st = check_path(path, field); !st.ok()) {
    return st;
  }
  if (!staging.empty()) {
    return check_path(staging, "staging_target_path");
  }
  return grpc::Status::OK;
}

/// NodeGetVolumeStats, NodeExpandVolume: the spec's answer for a volume that does
/// not exist is NOT_FOUND whatever else the request holds, so a refusal of another
/// field (`refusal`) is sent only once a lookup found the volume. Only a refused
/// request pays for the lookup.
grpc::ServerUnaryReactor* refuse_if_known(gateway& gw, const registry_actor& registry,
                                          counted_reactor* r, const std::string& id,
                                          grpc::Status refusal) {
  gw.ask(
    registry, query_timeout,
    [r, id, refusal](volume_record& rec) {
      r->Finish(rec.kind == record_kind::volume ? refusal : unknown_volume(id));
    },
    on_error(r), atom::get_v, id, std::string{owner_csi});
  return r;
}

/// Confines the node path `path` (the request's `field`) to the kubelet dir and
/// replaces it with its canonical spelling, the one the record and mountinfo use
/// (backends/node_path.hpp). INVALID_ARGUMENT naming the path otherwise.
grpc::Status confine(std::string& path, const char* field, const std::string& kubelet_dir) {
  auto confined = confine_node_path(path, kubelet_dir, field);
  if (!confined) {
    return invalid_argument(describe(confined.error()));
  }
  path = std::move(*confined);
  return grpc::Status::OK;
}

} // namespace

node_service::node_service(gateway& gw, registry_actor registry, const csi_config& cfg)
  : gw_(gw),
    registry_(std::move(registry)),
    env_(make_codec_env(cfg)),
    max_volumes_(cfg.max_volumes_per_node),
    kubelet_dir_(cfg.kubelet_dir),
    stats_(cfg.stats) {
}

grpc::ServerUnaryReactor* node_service::NodeStageVolume(grpc::CallbackServerContext* ctx,
                                                        const v1::NodeStageVolumeRequest* req,
                                                        v1::NodeStageVolumeResponse*) {
  auto* r = start(stats_, "NodeStageVolume");
  stage_request stage;
  if (auto st = decode_stage(*req, stage); !st.ok()) {
    return finish_now(r, st);
  }
  if (!may_exist(req->volume_id())) {
    return finish_now(r, unknown_volume(req->volume_id()));
  }
  if (auto st = confine(stage.staging_path, "staging_target_path", kubelet_dir_); !st.ok()) {
    return finish_now(r, st);
  }
  stage.from = caller_of(ctx);
  gw_.ask(
    registry_, transition_timeout, finish_ok(r), on_error(r), atom::stage_v,
    req->volume_id(), std::move(stage));
  return r;
}

grpc::ServerUnaryReactor* node_service::NodeUnstageVolume(grpc::CallbackServerContext*,
                                                          const v1::NodeUnstageVolumeRequest* req,
                                                          v1::NodeUnstageVolumeResponse*) {
  auto* r = start(stats_, "NodeUnstageVolume");
  if (auto st = check_paths(req->volume_id(), req->staging_target_path(), "staging_target_path");
      !st.ok()) {
    return finish_now(r, st);
  }
  if (auto st = check_volume_id(req->volume_id()); !st.ok()) {
    return finish_now(r, st);
  }
  auto staging = req->staging_target_path();
  if (auto st = confine(staging, "staging_target_path", kubelet_dir_); !st.ok()) {
    return finish_now(r, st);
  }
  gw_.ask(
    registry_, transition_timeout, finish_ok(r), on_error(r), atom::unstage_v,
    req->volume_id(), std::move(staging));
  return r;
}

grpc::ServerUnaryReactor* node_service::NodePublishVolume(grpc::CallbackServerContext* ctx,
                                                          const v1::NodePublishVolumeRequest* req,
                                                          v1::NodePublishVolumeResponse*) {
  auto* r = start(stats_, "NodePublishVolume");
  publish_request publish;
  if (auto st = decode_publish(*req, publish); !st.ok()) {
    return finish_now(r, st);
  }
  if (!may_exist(req->volume_id())) {
    return finish_now(r, unknown_volume(req->volume_id()));
  }
  if (auto st = confine(publish.target, "target_path", kubelet_dir_); !st.ok()) {
    return finish_now(r, st);
  }
  if (auto st = confine(publish.staging_path, "staging_target_path", kubelet_dir_); !st.ok()) {
    return finish_now(r, st);
  }
  if (publish.target == publish.staging_path) {
    return finish_now(r, invalid_argument("target_path " + quote(req->target_path())
                                          + " is the staging_target_path"));
  }
  publish.from = caller_of(ctx);
  gw_.ask(
    registry_, transition_timeout, finish_ok(r), on_error(r), atom::publish_v,
    req->volume_id(), std::move(publish));
  return r;
}

grpc::ServerUnaryReactor*
node_service::NodeUnpublishVolume(grpc::CallbackServerContext*,
                                  const v1::NodeUnpublishVolumeRequest* req,
                                  v1::NodeUnpublishVolumeResponse*) {
  auto* r = start(stats_, "NodeUnpublishVolume");
  if (auto st = check_paths(req->volume_id(), req->target_path(), "target_path"); !st.ok()) {
    return finish_now(r, st);
  }
  if (auto st = check_volume_id(req->volume_id()); !st.ok()) {
    return finish_now(r, st);
  }
  auto target = req->target_path();
  if (auto st = confine(target, "target_path", kubelet_dir_); !st.ok()) {
    return finish_now(r, st);
  }
  gw_.ask(
    registry_, transition_timeout, finish_ok(r), on_error(r), atom::unpublish_v,
    req->volume_id(), std::move(target));
  return r;
}

grpc::ServerUnaryReactor* node_service::NodeGetVolumeStats(grpc::CallbackServerContext*,
                                                           const v1::NodeGetVolumeStatsRequest* req,
                                                           v1::NodeGetVolumeStatsResponse* resp) {
  auto* r = start(stats_, "NodeGetVolumeStats");
  if (auto st = check_volume_id(req->volume_id()); !st.ok()) {
    return finish_now(r, st);
  }
  if (auto st = check_paths(req->volume_id(), req->volume_path(), "volume_path",
                            req->staging_target_path());
      !st.ok()) {
    return refuse_if_known(gw_, registry_, r, req->volume_id(), st);
  }
  gw_.ask(
    registry_, query_timeout,
    [r, resp](volume_stats& stats) {
      finish(r, [&] {
        encode_stats(stats, resp);
        return grpc::Status::OK;
      });
    },
    on_error(r), atom::stats_v, req->volume_id(), canonical_node_path(req->volume_path()));
  return r;
}

grpc::ServerUnaryReactor* node_service::NodeExpandVolume(grpc::CallbackServerContext*,
                                                         const v1::NodeExpandVolumeRequest* req,
                                                         v1::NodeExpandVolumeResponse* resp) {
  auto* r = start(stats_, "NodeExpandVolume");
  if (auto st = check_volume_id(req->volume_id()); !st.ok()) {
    return finish_now(r, st);
  }
  if (auto st = check_paths(req->volume_id(), req->volume_path(), "volume_path",
                            req->staging_target_path());
      !st.ok()) {
    return refuse_if_known(gw_, registry_, r, req->volume_id(), st);
  }
  if (req->has_volume_capability()) {
    if (auto st = check_capability(req->volume_capability(), ""); !st.ok()) {
      return refuse_if_known(gw_, registry_, r, req->volume_id(), st);
    }
  }
  if (req->has_capacity_range() && (req->capacity_range().required_bytes() < 0
                                    || req->capacity_range().limit_bytes() < 0)) {
    return refuse_if_known(gw_, registry_, r, req->volume_id(),
                           invalid_argument("capacity_range must not be negative"));
  }
  gw_.ask(
    registry_, transition_timeout,
    [r, resp](uint64_t capacity) {
      resp->set_capacity_bytes(capacity > static_cast<uint64_t>(INT64_MAX)
                                 ? INT64_MAX
                                 : static_cast<int64_t>(capacity));
      r->Finish(grpc::Status::OK);
    },
    on_error(r), atom::grow_v, req->volume_id(), canonical_node_path(req->volume_path()));
  return r;
}

grpc::ServerUnaryReactor*
node_service::NodeGetCapabilities(grpc::CallbackServerContext*,
                                  const v1::NodeGetCapabilitiesRequest*,
                                  v1::NodeGetCapabilitiesResponse* resp) {
  using rpc = v1::NodeServiceCapability::RPC;
  for (auto type : {rpc::STAGE_UNSTAGE_VOLUME, rpc::GET_VOLUME_STATS, rpc::EXPAND_VOLUME,
                    rpc::VOLUME_CONDITION, rpc::SINGLE_NODE_MULTI_WRITER}) {
    resp->add_capabilities()->mutable_rpc()->set_type(type);
  }
  return finish_now(start(stats_, "NodeGetCapabilities"), grpc::Status::OK);
}

grpc::ServerUnaryReactor* node_service::NodeGetInfo(grpc::CallbackServerContext*,
                                                    const v1::NodeGetInfoRequest*,
                                                    v1::NodeGetInfoResponse* resp) {
  resp->set_node_id(env_.node_id);
  resp->set_max_volumes_per_node(max_volumes_);
  (*resp->mutable_accessible_topology()->mutable_segments())[topology_key(env_.driver_name)] =
    env_.node_id;
  return finish_now(start(stats_, "NodeGetInfo"), grpc::Status::OK);
}

} // namespace berth::csi
