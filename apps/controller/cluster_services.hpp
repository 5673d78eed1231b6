#pragma once

// `berthd controller`'s CSI services: Identity and Controller, on gRPC's synchronous API,
// since each RPC waits on the Kubernetes API (a node answers through the BerthVolume's
// status) and holds nothing else. They store nothing: the objects are the state, so any
// number of controllers may serve, and a restarted one picks up where one left off.

#include <memory>
#include <string>

#include <grpcpp/grpcpp.h>

#include "apps/controller/snapshot_store.hpp"
#include "apps/controller/volume_store.hpp"
#include "protocols/csi/csi_codec.hpp"

#include "csi.grpc.pb.h"

namespace berth::controller {

namespace v1 = ::csi::v1;

/// Identity: CONTROLLER_SERVICE and VOLUME_ACCESSIBILITY_CONSTRAINTS, online expansion.
class cluster_identity final : public v1::Identity::Service {
public:
  cluster_identity(std::string driver_name, std::string version);

  grpc::Status GetPluginInfo(grpc::ServerContext*, const v1::GetPluginInfoRequest*,
                             v1::GetPluginInfoResponse* resp) override;
  grpc::Status GetPluginCapabilities(grpc::ServerContext*, const v1::GetPluginCapabilitiesRequest*,
                                     v1::GetPluginCapabilitiesResponse* resp) override;
  grpc::Status Probe(grpc::ServerContext*, const v1::ProbeRequest*,
                     v1::ProbeResponse* resp) override;

private:
  std::string name_;
  std::string version_;
};

/// Controller: each RPC on the volume's BerthVolume, or the snapshot's BerthSnapshot
/// (docs/running.md, "berth on a cluster").
class cluster_controller final : public v1::Controller::Service {
public:
  /// `advertise_since_1_10`: GET_SNAPSHOT among the capabilities (controller_config).
  cluster_controller(volume_store& store, snapshot_store& snapshots, csi::codec_env env,
                     bool advertise_since_1_10 = true);

  grpc::Status CreateVolume(grpc::ServerContext* ctx, const v1::CreateVolumeRequest* req,
                            v1::CreateVolumeResponse* resp) override;
  grpc::Status DeleteVolume(grpc::ServerContext* ctx, const v1::DeleteVolumeRequest* req,
                            v1::DeleteVolumeResponse* resp) override;
  grpc::Status ControllerExpandVolume(grpc::ServerContext* ctx,
                                      const v1::ControllerExpandVolumeRequest* req,
                                      v1::ControllerExpandVolumeResponse* resp) override;
  grpc::Status ControllerModifyVolume(grpc::ServerContext* ctx,
                                      const v1::ControllerModifyVolumeRequest* req,
                                      v1::ControllerModifyVolumeResponse* resp) override;
  grpc::Status ValidateVolumeCapabilities(grpc::ServerContext* ctx,
                                          const v1::ValidateVolumeCapabilitiesRequest* req,
                                          v1::ValidateVolumeCapabilitiesResponse* resp) override;
  grpc::Status ListVolumes(grpc::ServerContext* ctx, const v1::ListVolumesRequest* req,
                           v1::ListVolumesResponse* resp) override;
  grpc::Status ControllerGetVolume(grpc::ServerContext* ctx,
                                   const v1::ControllerGetVolumeRequest* req,
                                   v1::ControllerGetVolumeResponse* resp) override;
  grpc::Status GetCapacity(grpc::ServerContext* ctx, const v1::GetCapacityRequest* req,
                           v1::GetCapacityResponse* resp) override;
  grpc::Status ControllerGetCapabilities(grpc::ServerContext* ctx,
                                         const v1::ControllerGetCapabilitiesRequest* req,
                                         v1::ControllerGetCapabilitiesResponse* resp) override;

  // In cluster_snapshots.cpp.
  grpc::Status CreateSnapshot(grpc::ServerContext* ctx, const v1::CreateSnapshotRequest* req,
                              v1::CreateSnapshotResponse* resp) override;
  grpc::Status DeleteSnapshot(grpc::ServerContext* ctx, const v1::DeleteSnapshotRequest* req,
                              v1::DeleteSnapshotResponse* resp) override;
  grpc::Status ListSnapshots(grpc::ServerContext* ctx, const v1::ListSnapshotsRequest* req,
                             v1::ListSnapshotsResponse* resp) override;
  grpc::Status GetSnapshot(grpc::ServerContext* ctx, const v1::GetSnapshotRequest* req,
                           v1::GetSnapshotResponse* resp) override;

private:
  /// The object's answer as a CSI Volume (id = the CSI name, its node's topology).
  void encode(const kube::volume_object& obj, v1::Volume* out) const;
  /// The node a volume made from `source` must go to; an error status when the source is
  /// not there (or, for a snapshot, not ready yet).
  grpc::Status source_node(const content_source& source, clock_type::time_point until,
                           std::string& node);

  volume_store& store_;
  snapshot_store& snapshots_;
  csi::codec_env env_;
  std::string topology_key_;
  bool advertise_since_1_10_;
};

} // namespace berth::controller
