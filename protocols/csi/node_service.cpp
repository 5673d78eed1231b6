#include "protocols/csi/csi_services.hpp"

#include "backends/node_path.hpp"
#include "core/errors.hpp"
#include "core/text.hpp"

namespace berth::csi {

namespace {

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

/// `path` (the request's `field`, where the volume is to be or was put) is
/// well formed and, confined to the kubelet dir, replaced by its canonical spelling.
grpc::Status check_node_path(std::string& path, const char* field,
                             const std::string& kubelet_dir) {
  if (auto st = check_path(path, field); !st.ok()) {
    return st;
  }
  return confine(path, field, kubelet_dir);
}

/// The fields the node RPCs name their volume and its paths by.
required_field volume_id_of(const std::string& id) {
  return {!id.empty(), "volume_id"};
}
required_field path_field(const std::string& path, const char* field) {
  return {!path.empty(), field};
}

/// The staging_target_path, volume_capability and capacity_range of NodeExpandVolume,
/// all optional: the first refusal of their content, or OK.
grpc::Status expand_content(const v1::NodeExpandVolumeRequest& req) {
  if (!req.staging_target_path().empty()) {
    if (auto st = check_path(req.staging_target_path(), "staging_target_path"); !st.ok()) {
      return st;
    }
  }
  if (req.has_volume_capability()) {
    if (auto st = check_capability(req.volume_capability(), ""); !st.ok()) {
      return st;
    }
  }
  if (req.has_capacity_range()
      && (req.capacity_range().required_bytes() < 0 || req.capacity_range().limit_bytes() < 0)) {
    return invalid_argument("capacity_range must not be negative");
  }
  return grpc::Status::OK;
}

} // namespace

node_service::node_service(gateway& gw, registry_actor registry, const csi_config& cfg)
    : gw_(gw), registry_(std::move(registry)), env_(make_codec_env(cfg)),
      max_volumes_(cfg.max_volumes_per_node), kubelet_dir_(cfg.kubelet_dir),
      stats_(stats_or_private(cfg.stats)), handles_(cfg.handles) {}

template <class R, class OnOk, class Op, class... Ts>
void node_service::ask_volume(counted_reactor* r, const std::string& id, caf::duration timeout,
                              OnOk on_ok, Op op, Ts... xs) {
  // The gateway's actor, not the gateway: a request dropped at shutdown may ask after the
  // gateway object is gone, and then its job is dropped too.
  auto via_registry = [gw = gw_.actor(), registry = registry_, r, id, timeout, on_ok, op, xs...] {
    gateway::ask_through(
      gw, registry, timeout, [on_ok](R& out) mutable { on_ok(out); }, on_error(r), op, id, xs...);
  };
  send_to_volume<R>(handles_.get(), id, answer_of<R>(r, std::move(on_ok)), std::move(via_registry),
                    op, std::move(xs)...);
}

grpc::ServerUnaryReactor* node_service::NodeStageVolume(grpc::CallbackServerContext* ctx,
                                                        const v1::NodeStageVolumeRequest* req,
                                                        v1::NodeStageVolumeResponse*) {
  auto* r = start(stats_, "NodeStageVolume");
  stage_request stage;
  request_shape shape;
  shape.required = {volume_id_of(req->volume_id()),
                    path_field(req->staging_target_path(), "staging_target_path"),
                    {req->has_volume_capability(), "volume_capability"}};
  shape.volume_id = &req->volume_id();
  shape.content = decode_stage(*req, stage);
  if (shape.content.ok()) {
    shape.content = confine(stage.staging_path, "staging_target_path", kubelet_dir_);
  }
  if (auto* refused = refuse(gw_, registry_, r, shape)) {
    return refused;
  }
  stage.from = caller_of(ctx);
  ask_volume<atom::ok>(r, req->volume_id(), transition_timeout, finish_ok(r), atom::stage_v,
                       std::move(stage));
  return r;
}

grpc::ServerUnaryReactor* node_service::NodeUnstageVolume(grpc::CallbackServerContext*,
                                                          const v1::NodeUnstageVolumeRequest* req,
                                                          v1::NodeUnstageVolumeResponse*) {
  auto* r = start(stats_, "NodeUnstageVolume");
  auto staging = req->staging_target_path();
  request_shape shape;
  shape.required = {volume_id_of(req->volume_id()),
                    path_field(staging, "staging_target_path")};
  shape.volume_id = &req->volume_id();
  shape.content = check_node_path(staging, "staging_target_path", kubelet_dir_);
  if (auto* refused = refuse(gw_, registry_, r, shape)) {
    return refused;
  }
  ask_volume<atom::ok>(r, req->volume_id(), transition_timeout, finish_ok(r), atom::unstage_v,
                       std::move(staging));
  return r;
}

grpc::ServerUnaryReactor* node_service::NodePublishVolume(grpc::CallbackServerContext* ctx,
                                                          const v1::NodePublishVolumeRequest* req,
                                                          v1::NodePublishVolumeResponse*) {
  auto* r = start(stats_, "NodePublishVolume");
  publish_request publish;
  request_shape shape;
  // staging_target_path is REQUIRED here: berth advertises STAGE_UNSTAGE_VOLUME.
  shape.required = {volume_id_of(req->volume_id()),
                    path_field(req->staging_target_path(), "staging_target_path"),
                    path_field(req->target_path(), "target_path"),
                    {req->has_volume_capability(), "volume_capability"}};
  shape.volume_id = &req->volume_id();
  shape.content = decode_publish(*req, publish);
  if (shape.content.ok()) {
    shape.content = confine(publish.target, "target_path", kubelet_dir_);
  }
  if (shape.content.ok()) {
    shape.content = confine(publish.staging_path, "staging_target_path", kubelet_dir_);
  }
  if (shape.content.ok() && publish.target == publish.staging_path) {
    shape.content =
      invalid_argument("target_path " + quote_input(req->target_path())
                       + " is the staging_target_path");
  }
  if (auto* refused = refuse(gw_, registry_, r, shape)) {
    return refused;
  }
  publish.from = caller_of(ctx);
  ask_volume<atom::ok>(r, req->volume_id(), transition_timeout, finish_ok(r), atom::publish_v,
                       std::move(publish));
  return r;
}

grpc::ServerUnaryReactor*
node_service::NodeUnpublishVolume(grpc::CallbackServerContext*,
                                  const v1::NodeUnpublishVolumeRequest* req,
                                  v1::NodeUnpublishVolumeResponse*) {
  auto* r = start(stats_, "NodeUnpublishVolume");
  auto target = req->target_path();
  request_shape shape;
  shape.required = {volume_id_of(req->volume_id()), path_field(target, "target_path")};
  shape.volume_id = &req->volume_id();
  shape.content = check_node_path(target, "target_path", kubelet_dir_);
  if (auto* refused = refuse(gw_, registry_, r, shape)) {
    return refused;
  }
  ask_volume<atom::ok>(r, req->volume_id(), transition_timeout, finish_ok(r), atom::unpublish_v,
                       std::move(target));
  return r;
}

grpc::ServerUnaryReactor* node_service::NodeGetVolumeStats(grpc::CallbackServerContext*,
                                                           const v1::NodeGetVolumeStatsRequest* req,
                                                           v1::NodeGetVolumeStatsResponse* resp) {
  auto* r = start(stats_, "NodeGetVolumeStats");
  request_shape shape;
  shape.required = {volume_id_of(req->volume_id()), path_field(req->volume_path(), "volume_path")};
  shape.volume_id = &req->volume_id();
  shape.located_path = &req->volume_path();
  if (!req->staging_target_path().empty()) {
    shape.content = check_path(req->staging_target_path(), "staging_target_path");
  }
  if (auto* refused = refuse(gw_, registry_, r, shape)) {
    return refused;
  }
  // The volume actor answers NOT_FOUND for a path where the volume is neither
  // staged nor published.
  auto answer = [r, resp, stats = stats_, name = req->volume_id()](const volume_stats& st) {
    finish(r, [&] {
      encode_stats(st, stats->health.of(name), resp);
      return grpc::Status::OK;
    });
  };
  ask_volume<volume_stats>(r, req->volume_id(), query_timeout, std::move(answer), atom::stats_v,
                           canonical_node_path(req->volume_path()));
  return r;
}

grpc::ServerUnaryReactor* node_service::NodeExpandVolume(grpc::CallbackServerContext*,
                                                         const v1::NodeExpandVolumeRequest* req,
                                                         v1::NodeExpandVolumeResponse* resp) {
  auto* r = start(stats_, "NodeExpandVolume");
  request_shape shape;
  shape.required = {volume_id_of(req->volume_id()), path_field(req->volume_path(), "volume_path")};
  shape.volume_id = &req->volume_id();
  shape.located_path = &req->volume_path();
  shape.content = expand_content(*req);
  if (auto* refused = refuse(gw_, registry_, r, shape)) {
    return refused;
  }
  auto answer = [r, resp](uint64_t capacity) {
    resp->set_capacity_bytes(
      capacity > static_cast<uint64_t>(INT64_MAX) ? INT64_MAX : static_cast<int64_t>(capacity));
    r->Finish(grpc::Status::OK);
  };
  ask_volume<uint64_t>(r, req->volume_id(), transition_timeout, std::move(answer), atom::grow_v,
                       canonical_node_path(req->volume_path()));
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
