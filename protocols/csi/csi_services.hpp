#pragma once

// The three CSI gRPC services, on the callback API. Each RPC decodes and checks
// the request (csi_codec), sends one message to the registry through the
// gateway, and finishes its reactor from the reply callback: no gRPC thread
// ever waits for an actor.
//
//   kubelet / sidecars ─gRPC─▶ {identity,controller,node}_service
//        ▲                         │ gateway::ask (never blocks)
//        └── reactor->Finish ◀─────┴──▶ registry_actor ──▶ volume_actor

#include <exception>
#include <map>
#include <memory>
#include <string>

#include <grpcpp/grpcpp.h>

#include "actors/actors.hpp"
#include "actors/registry_direct.hpp"
#include "protocols/csi/arena_allocator.hpp"
#include "protocols/csi/counted_reactor.hpp"
#include "protocols/csi/csi_codec.hpp"
#include "protocols/csi/csi_config.hpp"
#include "protocols/csi/refusal_order.hpp"
#include "protocols/csi/status.hpp"
#include "protocols/gateway/gateway.hpp"

#include "csi.grpc.pb.h"

namespace berth::csi {

/// The codec's view of the configuration.
codec_env make_codec_env(const csi_config& cfg);

/// Finishes `r` with what `encode()` returns; an exception becomes INTERNAL, so
/// the call is always finished exactly once.
template <class F>
void finish(counted_reactor* r, F&& encode) noexcept {
  grpc::Status st;
  try {
    st = encode();
  } catch (const std::exception& e) {
    st = grpc::Status{grpc::StatusCode::INTERNAL,
                      std::string{"encoding the reply failed: "} + e.what()};
  } catch (...) {
    st = grpc::Status{grpc::StatusCode::INTERNAL, "encoding the reply failed"};
  }
  r->Finish(st);
}

/// An error callback for gateway::ask that finishes `r` with the mapped status.
inline auto on_error(counted_reactor* r) {
  return [r](caf::error& err) { r->fail(err); };
}

/// A reply callback for gateway::ask on a transition answered with atom::ok.
inline auto finish_ok(counted_reactor* r) {
  return [r](atom::ok) { r->Finish(grpc::Status::OK); };
}

/// A direct_reply's answer (send_to_registry): `on_ok(value)`, or `r` failed with the
/// mapped status.
template <class R, class F>
auto answer_of(counted_reactor* r, F on_ok) {
  return [r, on_ok = std::move(on_ok)](caf::expected<R> out) mutable {
    if (out) {
      on_ok(*out);
    } else {
      r->fail(out.error());
    }
  };
}

/// The client of a call as a caller: past the call's deadline (kubelet sets one on
/// every call) it counts as gone, so a request that waited longer in its volume's
/// queue is not started. (The default reactor gives no cancellation callback.)
inline caller caller_of(const grpc::CallbackServerContext* ctx) {
  auto left = ctx->deadline() - std::chrono::system_clock::now();
  if (left > std::chrono::hours(24 * 365)) {
    return caller::tracked(); // no deadline (gpr_inf_future)
  }
  return caller::tracked(caller::clock::now()
                         + std::chrono::duration_cast<caller::clock::duration>(left));
}

/// Finishes `r` at once with `st` (a synchronous answer or a refusal); returns `r`.
inline grpc::ServerUnaryReactor* finish_now(counted_reactor* r, grpc::Status st) {
  r->Finish(st);
  return r;
}

/// Applies the refusal order (refusal_order.hpp) to `shape`. Returns null when the
/// request is admitted, and the RPC sends its message; otherwise `r`, finished now,
/// or once a lookup of the volume decided between the content refusal and NOT_FOUND.
grpc::ServerUnaryReactor* refuse(gateway& gw, const registry_actor& registry,
                                 counted_reactor* r, const request_shape& shape);

/// Finishes `r` with `answer` once a lookup finds that `id` names a CSI volume, and
/// with NOT_FOUND ("<noun> "<id>" does not exist", or the registry's) otherwise.
grpc::ServerUnaryReactor* answer_if_volume_exists(gateway& gw, const registry_actor& registry,
                                                  counted_reactor* r, const std::string& id,
                                                  grpc::Status answer,
                                                  const char* noun = "volume");

// -- Identity -------------------------------------------------------------------

class identity_service final : public v1::Identity::CallbackService {
public:
  explicit identity_service(const csi_config& cfg);

  grpc::ServerUnaryReactor* GetPluginInfo(grpc::CallbackServerContext* ctx,
                                          const v1::GetPluginInfoRequest* req,
                                          v1::GetPluginInfoResponse* resp) override;
  grpc::ServerUnaryReactor* GetPluginCapabilities(grpc::CallbackServerContext* ctx,
                                                  const v1::GetPluginCapabilitiesRequest* req,
                                                  v1::GetPluginCapabilitiesResponse* resp) override;
  grpc::ServerUnaryReactor* Probe(grpc::CallbackServerContext* ctx, const v1::ProbeRequest* req,
                                  v1::ProbeResponse* resp) override;

private:
  std::string name_;
  std::string version_;
  bool serves_controller_;
  bool serves_snapshot_metadata_;
  std::shared_ptr<telemetry> stats_;
};

// -- Controller -----------------------------------------------------------------

class controller_service final : public v1::Controller::CallbackService {
public:
  controller_service(gateway& gw, registry_actor registry, const csi_config& cfg);

  grpc::ServerUnaryReactor* CreateVolume(grpc::CallbackServerContext* ctx,
                                         const v1::CreateVolumeRequest* req,
                                         v1::CreateVolumeResponse* resp) override;
  grpc::ServerUnaryReactor* DeleteVolume(grpc::CallbackServerContext* ctx,
                                         const v1::DeleteVolumeRequest* req,
                                         v1::DeleteVolumeResponse* resp) override;
  grpc::ServerUnaryReactor* ControllerPublishVolume(
    grpc::CallbackServerContext* ctx, const v1::ControllerPublishVolumeRequest* req,
    v1::ControllerPublishVolumeResponse* resp) override;
  grpc::ServerUnaryReactor* ControllerUnpublishVolume(
    grpc::CallbackServerContext* ctx, const v1::ControllerUnpublishVolumeRequest* req,
    v1::ControllerUnpublishVolumeResponse* resp) override;
  grpc::ServerUnaryReactor* ValidateVolumeCapabilities(
    grpc::CallbackServerContext* ctx, const v1::ValidateVolumeCapabilitiesRequest* req,
    v1::ValidateVolumeCapabilitiesResponse* resp) override;
  grpc::ServerUnaryReactor* ListVolumes(grpc::CallbackServerContext* ctx,
                                        const v1::ListVolumesRequest* req,
                                        v1::ListVolumesResponse* resp) override;
  grpc::ServerUnaryReactor* GetCapacity(grpc::CallbackServerContext* ctx,
                                        const v1::GetCapacityRequest* req,
                                        v1::GetCapacityResponse* resp) override;
  grpc::ServerUnaryReactor* ControllerGetCapabilities(
    grpc::CallbackServerContext* ctx, const v1::ControllerGetCapabilitiesRequest* req,
    v1::ControllerGetCapabilitiesResponse* resp) override;
  grpc::ServerUnaryReactor* CreateSnapshot(grpc::CallbackServerContext* ctx,
                                           const v1::CreateSnapshotRequest* req,
                                           v1::CreateSnapshotResponse* resp) override;
  grpc::ServerUnaryReactor* DeleteSnapshot(grpc::CallbackServerContext* ctx,
                                           const v1::DeleteSnapshotRequest* req,
                                           v1::DeleteSnapshotResponse* resp) override;
  grpc::ServerUnaryReactor* ListSnapshots(grpc::CallbackServerContext* ctx,
                                          const v1::ListSnapshotsRequest* req,
                                          v1::ListSnapshotsResponse* resp) override;
  grpc::ServerUnaryReactor* GetSnapshot(grpc::CallbackServerContext* ctx,
                                        const v1::GetSnapshotRequest* req,
                                        v1::GetSnapshotResponse* resp) override;
  grpc::ServerUnaryReactor* ControllerExpandVolume(
    grpc::CallbackServerContext* ctx, const v1::ControllerExpandVolumeRequest* req,
    v1::ControllerExpandVolumeResponse* resp) override;
  grpc::ServerUnaryReactor* ControllerGetVolume(grpc::CallbackServerContext* ctx,
                                                const v1::ControllerGetVolumeRequest* req,
                                                v1::ControllerGetVolumeResponse* resp) override;
  grpc::ServerUnaryReactor* ControllerModifyVolume(
    grpc::CallbackServerContext* ctx, const v1::ControllerModifyVolumeRequest* req,
    v1::ControllerModifyVolumeResponse* resp) override;

private:
  /// Delete{Volume,Snapshot}: removes `name` (the request's `field`) if it is a
  /// record of `kind`; unknown (or of the other kind) is success (idempotent).
  grpc::ServerUnaryReactor* remove_kind(grpc::CallbackServerContext* ctx,
                                        const char* rpc, const std::string& name,
                                        const char* field, record_kind kind);

  /// ListVolumes' answer from `all` (records of any owner and kind, sorted by name).
  grpc::Status list_volumes(shared_records all, const v1::ListVolumesRequest& req,
                            v1::ListVolumesResponse& resp) const;

  gateway& gw_;
  registry_actor registry_;
  codec_env env_;
  std::map<std::string, std::shared_ptr<backend>> backends_;
  std::shared_ptr<telemetry> stats_;
  std::shared_ptr<const record_directory> directory_; ///< null: lists ask the registry
  arena_allocator<v1::ListVolumesRequest, v1::ListVolumesResponse> list_volumes_messages_;
  arena_allocator<v1::ListSnapshotsRequest, v1::ListSnapshotsResponse> list_snapshots_messages_;
  bool advertise_since_1_10_ = true; ///< csi_config::advertise_since_1_10
};

// -- Node -----------------------------------------------------------------------

class node_service final : public v1::Node::CallbackService {
public:
  node_service(gateway& gw, registry_actor registry, const csi_config& cfg);

  grpc::ServerUnaryReactor* NodeStageVolume(grpc::CallbackServerContext* ctx,
                                            const v1::NodeStageVolumeRequest* req,
                                            v1::NodeStageVolumeResponse* resp) override;
  grpc::ServerUnaryReactor* NodeUnstageVolume(grpc::CallbackServerContext* ctx,
                                              const v1::NodeUnstageVolumeRequest* req,
                                              v1::NodeUnstageVolumeResponse* resp) override;
  grpc::ServerUnaryReactor* NodePublishVolume(grpc::CallbackServerContext* ctx,
                                              const v1::NodePublishVolumeRequest* req,
                                              v1::NodePublishVolumeResponse* resp) override;
  grpc::ServerUnaryReactor* NodeUnpublishVolume(grpc::CallbackServerContext* ctx,
                                                const v1::NodeUnpublishVolumeRequest* req,
                                                v1::NodeUnpublishVolumeResponse* resp) override;
  grpc::ServerUnaryReactor* NodeGetVolumeStats(grpc::CallbackServerContext* ctx,
                                               const v1::NodeGetVolumeStatsRequest* req,
                                               v1::NodeGetVolumeStatsResponse* resp) override;
  grpc::ServerUnaryReactor* NodeExpandVolume(grpc::CallbackServerContext* ctx,
                                             const v1::NodeExpandVolumeRequest* req,
                                             v1::NodeExpandVolumeResponse* resp) override;
  grpc::ServerUnaryReactor* NodeGetCapabilities(grpc::CallbackServerContext* ctx,
                                                const v1::NodeGetCapabilitiesRequest* req,
                                                v1::NodeGetCapabilitiesResponse* resp) override;
  grpc::ServerUnaryReactor* NodeGetInfo(grpc::CallbackServerContext* ctx,
                                        const v1::NodeGetInfoRequest* req,
                                        v1::NodeGetInfoResponse* resp) override;

private:
  /// Sends `op, id, xs...` to the volume `id` when the handles know it, answered on the
  /// volume's thread; else, or when the volume had quit as it arrived, to the registry
  /// (within `timeout`). `on_ok(R)` answers its success; an error fails `r`.
  template <class R, class OnOk, class Op, class... Ts>
  void ask_volume(counted_reactor* r, const std::string& id, caf::duration timeout, OnOk on_ok,
                  Op op, Ts... xs);

  gateway& gw_;
  registry_actor registry_;
  codec_env env_;
  int64_t max_volumes_;
  std::string kubelet_dir_; ///< node paths must lie below it
  std::shared_ptr<telemetry> stats_;
  std::shared_ptr<const volume_handles> handles_;
};

} // namespace berth::csi
