// The CSI server's identity and capabilities in one process (csi_server_fixture.hpp):
// every capability berth advertises is probed through the RPC behind it, so none is
// advertised that does not work. Volumes, node RPCs and the socket: csi_server_test.cpp.

#include "protocols/csi/csi_server.hpp"

#include <functional>
#include <map>
#include <memory>
#include <set>

#include <caf/all.hpp>
#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>

#include "csi.grpc.pb.h"
#include "tests/protocols/csi_server_fixture.hpp"

using namespace berth;
namespace v1 = ::csi::v1;
using grpc::StatusCode;

namespace {

class csi_capability_test : public test::csi_server_fixture {
protected:
  // As berthd runs it: with the record directory, which SnapshotMetadata reads.
  csi_capability_test() { directory = std::make_shared<record_directory>(); }

  // -- capability probes ---------------------------------------------------------

  /// The RPC behind one capability, called with a request that is well formed but
  /// names no volume berth holds. `field`: the capability is a request field (an
  /// access mode, a mount group), so INVALID_ARGUMENT means it is not backed either.
  struct probe {
    std::function<grpc::Status()> call;
    bool field = false;
  };

  static v1::VolumeCapability cap_of(v1::VolumeCapability::AccessMode::Mode m =
                                       v1::VolumeCapability::AccessMode::SINGLE_NODE_WRITER) {
    v1::VolumeCapability cap;
    cap.mutable_mount();
    cap.mutable_access_mode()->set_mode(m);
    return cap;
  }

  /// Calls `fn` on a fresh stub with a fresh context.
  template <class Stub, class Req, class Resp>
  grpc::Status rpc(grpc::Status (Stub::*fn)(grpc::ClientContext*, const Req&, Resp*),
                   const Req& req) {
    Stub stub{channel};
    Resp resp;
    grpc::ClientContext c;
    return (stub.*fn)(ctx(c), req, &resp);
  }

  std::map<int, probe> controller_probes() {
    using rpc_type = v1::ControllerServiceCapability::RPC;
    using ctrl = v1::Controller::Stub;
    const auto snmw = v1::VolumeCapability::AccessMode::SINGLE_NODE_MULTI_WRITER;
    auto create = [this](const std::string& name, const v1::VolumeCapability& cap,
                         bool clone) {
      v1::CreateVolumeRequest req;
      req.set_name(name);
      *req.add_volume_capabilities() = cap;
      if (clone) {
        req.mutable_volume_content_source()->mutable_volume()->set_volume_id("pvc-none");
      }
      return rpc(&ctrl::CreateVolume, req);
    };
    auto controller_publish = [this](bool readonly) {
      v1::ControllerPublishVolumeRequest req;
      req.set_volume_id("pvc-none");
      req.set_node_id("node-1");
      *req.mutable_volume_capability() = cap_of();
      req.set_readonly(readonly);
      return rpc(&ctrl::ControllerPublishVolume, req);
    };
    auto get_volume = [this] {
      v1::ControllerGetVolumeRequest req;
      req.set_volume_id("pvc-none");
      return rpc(&ctrl::ControllerGetVolume, req);
    };
    return {
      {rpc_type::CREATE_DELETE_VOLUME, {[=] {
         v1::DeleteVolumeRequest del;
         del.set_volume_id("pvc-none");
         auto st = rpc(&ctrl::DeleteVolume, del);
         return st.ok() ? create("probe-create", cap_of(), false) : st;
       }}},
      {rpc_type::PUBLISH_UNPUBLISH_VOLUME, {[=] { return controller_publish(false); }}},
      {rpc_type::LIST_VOLUMES, {[=] { return rpc(&ctrl::ListVolumes, v1::ListVolumesRequest{}); }}},
      {rpc_type::GET_CAPACITY, {[=] { return rpc(&ctrl::GetCapacity, v1::GetCapacityRequest{}); }}},
      {rpc_type::CREATE_DELETE_SNAPSHOT, {[=] {
         v1::DeleteSnapshotRequest del;
         del.set_snapshot_id("snap-none");
         return rpc(&ctrl::DeleteSnapshot, del);
       }}},
      {rpc_type::LIST_SNAPSHOTS,
       {[=] { return rpc(&ctrl::ListSnapshots, v1::ListSnapshotsRequest{}); }}},
      {rpc_type::GET_SNAPSHOT, {[=] {
         v1::GetSnapshotRequest req;
         req.set_snapshot_id("snap-none");
         return rpc(&ctrl::GetSnapshot, req);
       }}},
      {rpc_type::CLONE_VOLUME, {[=] { return create("probe-clone", cap_of(), true); }, true}},
      {rpc_type::PUBLISH_READONLY, {[=] { return controller_publish(true); }}},
      {rpc_type::EXPAND_VOLUME, {[=] {
         v1::ControllerExpandVolumeRequest req;
         req.set_volume_id("pvc-none");
         req.mutable_capacity_range()->set_required_bytes(1 << 20);
         return rpc(&ctrl::ControllerExpandVolume, req);
       }}},
      {rpc_type::LIST_VOLUMES_PUBLISHED_NODES,
       {[=] { return rpc(&ctrl::ListVolumes, v1::ListVolumesRequest{}); }}},
      {rpc_type::VOLUME_CONDITION, {get_volume}},
      {rpc_type::GET_VOLUME, {get_volume}},
      {rpc_type::SINGLE_NODE_MULTI_WRITER,
       {[=] { return create("probe-snmw", cap_of(snmw), false); }, true}},
      {rpc_type::MODIFY_VOLUME, {[=] {
         v1::ControllerModifyVolumeRequest req;
         req.set_volume_id("pvc-none");
         (*req.mutable_mutable_parameters())["iops"] = "3000";
         return rpc(&ctrl::ControllerModifyVolume, req);
       }}},
    };
  }

  std::map<int, probe> node_probes() {
    using rpc_type = v1::NodeServiceCapability::RPC;
    using node = v1::Node::Stub;
    auto stage = [this](const std::string& mount_group) {
      v1::NodeStageVolumeRequest req;
      req.set_volume_id("pvc-none");
      req.set_staging_target_path(dir.path + "/staging");
      *req.mutable_volume_capability() = cap_of();
      req.mutable_volume_capability()->mutable_mount()->set_volume_mount_group(mount_group);
      return rpc(&node::NodeStageVolume, req);
    };
    auto stats = [this] {
      v1::NodeGetVolumeStatsRequest req;
      req.set_volume_id("pvc-none");
      req.set_volume_path(dir.path + "/staging");
      return rpc(&node::NodeGetVolumeStats, req);
    };
    return {
      {rpc_type::STAGE_UNSTAGE_VOLUME, {[=] {
         auto st = stage("");
         if (st.error_code() == StatusCode::UNIMPLEMENTED) {
           return st;
         }
         v1::NodeUnstageVolumeRequest req;
         req.set_volume_id("pvc-none");
         req.set_staging_target_path(dir.path + "/staging");
         return rpc(&node::NodeUnstageVolume, req);
       }}},
      {rpc_type::GET_VOLUME_STATS, {stats}},
      {rpc_type::EXPAND_VOLUME, {[=] {
         v1::NodeExpandVolumeRequest req;
         req.set_volume_id("pvc-none");
         req.set_volume_path(dir.path + "/staging");
         return rpc(&node::NodeExpandVolume, req);
       }}},
      {rpc_type::VOLUME_CONDITION, {stats}},
      {rpc_type::SINGLE_NODE_MULTI_WRITER, {[=] {
         v1::NodePublishVolumeRequest req;
         req.set_volume_id("pvc-none");
         req.set_staging_target_path(dir.path + "/staging");
         req.set_target_path(dir.path + "/target");
         *req.mutable_volume_capability() =
           cap_of(v1::VolumeCapability::AccessMode::SINGLE_NODE_MULTI_WRITER);
         return rpc(&node::NodePublishVolume, req);
       }, true}},
      {rpc_type::VOLUME_MOUNT_GROUP, {[=] { return stage("1000"); }, true}},
    };
  }

  /// A probe for a plugin capability, keyed "service:N" or "expansion:N".
  std::map<std::string, probe> plugin_probes() {
    using service = v1::PluginCapability::Service;
    using expansion = v1::PluginCapability::VolumeExpansion;
    auto expand_both = [this] {
      v1::ControllerExpandVolumeRequest ctrl;
      ctrl.set_volume_id("pvc-none");
      ctrl.mutable_capacity_range()->set_required_bytes(1 << 20);
      auto st = rpc(&v1::Controller::Stub::ControllerExpandVolume, ctrl);
      if (st.error_code() == StatusCode::UNIMPLEMENTED) {
        return st;
      }
      v1::NodeExpandVolumeRequest node;
      node.set_volume_id("pvc-none");
      node.set_volume_path(dir.path + "/staging");
      return rpc(&v1::Node::Stub::NodeExpandVolume, node);
    };
    return {
      {"service:" + std::to_string(service::CONTROLLER_SERVICE), {[=] {
         return rpc(&v1::Controller::Stub::ControllerGetCapabilities,
                    v1::ControllerGetCapabilitiesRequest{});
       }}},
      {"service:" + std::to_string(service::VOLUME_ACCESSIBILITY_CONSTRAINTS),
       {[=] {
          v1::CreateVolumeRequest req;
          req.set_name("probe-topology");
          *req.add_volume_capabilities() = cap_of();
          (*req.mutable_accessibility_requirements()
              ->add_requisite()
              ->mutable_segments())["topology.berth.csi.dev/node"] = "node-1";
          return rpc(&v1::Controller::Stub::CreateVolume, req);
        },
        true}},
      {"service:" + std::to_string(service::SNAPSHOT_METADATA_SERVICE), {[this] {
         v1::GetMetadataAllocatedRequest req;
         req.set_snapshot_id("snap-none");
         auto stub = v1::SnapshotMetadata::NewStub(channel);
         grpc::ClientContext c;
         auto reader = stub->GetMetadataAllocated(ctx(c), req);
         v1::GetMetadataAllocatedResponse ignored;
         while (reader->Read(&ignored)) {
         }
         return reader->Finish();
       }}},
      {"service:" + std::to_string(service::GROUP_CONTROLLER_SERVICE), {[] {
         return grpc::Status{StatusCode::UNIMPLEMENTED, "berth serves no GroupController"};
       }}},
      {"expansion:" + std::to_string(expansion::ONLINE), {expand_both}},
      {"expansion:" + std::to_string(expansion::OFFLINE), {expand_both}},
    };
  }

  /// Fails unless `p` reaches an RPC that berth serves.
  static ::testing::AssertionResult backed(const std::string& capability, const probe* p) {
    if (p == nullptr) {
      return ::testing::AssertionFailure()
             << capability << " is advertised, but no probe here knows its RPC: add one";
    }
    auto st = p->call();
    if (st.error_code() == StatusCode::UNIMPLEMENTED
        || (p->field && st.error_code() == StatusCode::INVALID_ARGUMENT)) {
      return ::testing::AssertionFailure()
             << capability << " is advertised, but its RPC answers " << st.error_code() << ": "
             << st.error_message();
    }
    return ::testing::AssertionSuccess();
  }

};

} // namespace

TEST_F(csi_capability_test, serves_identity) {
  auto stub = v1::Identity::NewStub(channel);
  v1::GetPluginInfoResponse info;
  grpc::ClientContext c1;
  ASSERT_TRUE(stub->GetPluginInfo(ctx(c1), {}, &info).ok());
  EXPECT_EQ(info.name(), "berth.csi.dev");
  EXPECT_EQ(info.vendor_version(), "9.9.9");
  // GetPluginCapabilities: see advertises_only_capabilities_whose_rpcs_work.
  v1::ProbeResponse probe;
  grpc::ClientContext c3;
  ASSERT_TRUE(stub->Probe(ctx(c3), {}, &probe).ok());
  EXPECT_TRUE(probe.ready().value());
}

// Every capability berth advertises is backed by an RPC that works (not
// UNIMPLEMENTED; for a capability that is a request field, the field is
// accepted), and the ones berth's deployment relies on are there. No pinned list:
// advertising MODIFY_VOLUME once ControllerModifyVolume works needs no edit here.
TEST_F(csi_capability_test, advertises_only_capabilities_whose_rpcs_work) {
  v1::GetPluginCapabilitiesResponse plugin;
  grpc::ClientContext c1;
  ASSERT_TRUE(v1::Identity::NewStub(channel)->GetPluginCapabilities(ctx(c1), {}, &plugin).ok());
  auto plugin_probe = plugin_probes();
  for (const auto& cap : plugin.capabilities()) {
    std::string key = cap.has_service()
                        ? "service:" + std::to_string(cap.service().type())
                        : "expansion:" + std::to_string(cap.volume_expansion().type());
    auto it = plugin_probe.find(key);
    EXPECT_TRUE(backed("plugin capability " + cap.ShortDebugString(),
                       it == plugin_probe.end() ? nullptr : &it->second));
  }
  v1::ControllerGetCapabilitiesResponse ctrl;
  grpc::ClientContext c2;
  ASSERT_TRUE(v1::Controller::NewStub(channel)->ControllerGetCapabilities(ctx(c2), {}, &ctrl).ok());
  auto ctrl_probe = controller_probes();
  for (const auto& cap : ctrl.capabilities()) {
    auto it = ctrl_probe.find(cap.rpc().type());
    EXPECT_TRUE(backed("controller capability " + cap.ShortDebugString(),
                       it == ctrl_probe.end() ? nullptr : &it->second));
  }
  v1::NodeGetCapabilitiesResponse node;
  grpc::ClientContext c3;
  ASSERT_TRUE(v1::Node::NewStub(channel)->NodeGetCapabilities(ctx(c3), {}, &node).ok());
  auto node_probe = node_probes();
  for (const auto& cap : node.capabilities()) {
    auto it = node_probe.find(cap.rpc().type());
    EXPECT_TRUE(backed("node capability " + cap.ShortDebugString(),
                       it == node_probe.end() ? nullptr : &it->second));
  }
}

// The probes themselves can fail: what berth does not serve is caught.
TEST_F(csi_capability_test, capability_probes_catch_rpcs_berth_does_not_serve) {
  using ctrl_rpc = v1::ControllerServiceCapability::RPC;
  auto ctrl_probe = controller_probes();
  EXPECT_FALSE(backed("PUBLISH_UNPUBLISH_VOLUME", &ctrl_probe.at(ctrl_rpc::PUBLISH_UNPUBLISH_VOLUME)));
  probe refused_field{[] { return grpc::Status{StatusCode::INVALID_ARGUMENT, "no"}; }, true};
  EXPECT_FALSE(backed("a field berth refuses", &refused_field));
  EXPECT_FALSE(backed("an unknown capability", nullptr));
}

TEST_F(csi_capability_test, advertises_the_capabilities_berth_needs) {
  v1::GetPluginCapabilitiesResponse plugin;
  grpc::ClientContext c1;
  ASSERT_TRUE(v1::Identity::NewStub(channel)->GetPluginCapabilities(ctx(c1), {}, &plugin).ok());
  std::set<std::string> has;
  for (const auto& cap : plugin.capabilities()) {
    has.insert(cap.has_service() ? "service:" + std::to_string(cap.service().type())
                                 : "expansion:" + std::to_string(cap.volume_expansion().type()));
  }
  using service = v1::PluginCapability::Service;
  for (auto need : {service::CONTROLLER_SERVICE, service::VOLUME_ACCESSIBILITY_CONSTRAINTS}) {
    EXPECT_EQ(has.count("service:" + std::to_string(need)), 1u)
      << "plugin capability " << service::Type_Name(need) << " is missing";
  }
  EXPECT_EQ(has.count("expansion:" + std::to_string(v1::PluginCapability::VolumeExpansion::ONLINE)),
            1u) << "online volume expansion is missing";

  v1::ControllerGetCapabilitiesResponse ctrl;
  grpc::ClientContext c2;
  ASSERT_TRUE(v1::Controller::NewStub(channel)->ControllerGetCapabilities(ctx(c2), {}, &ctrl).ok());
  std::set<int> ctrl_has;
  for (const auto& cap : ctrl.capabilities()) {
    ctrl_has.insert(cap.rpc().type());
  }
  using ctrl_rpc = v1::ControllerServiceCapability::RPC;
  for (auto need : {ctrl_rpc::CREATE_DELETE_VOLUME, ctrl_rpc::LIST_VOLUMES, ctrl_rpc::GET_CAPACITY,
                    ctrl_rpc::CREATE_DELETE_SNAPSHOT, ctrl_rpc::LIST_SNAPSHOTS,
                    ctrl_rpc::CLONE_VOLUME, ctrl_rpc::EXPAND_VOLUME, ctrl_rpc::GET_VOLUME}) {
    EXPECT_EQ(ctrl_has.count(need), 1u)
      << "controller capability " << ctrl_rpc::Type_Name(need) << " is missing";
  }

  v1::NodeGetCapabilitiesResponse node;
  grpc::ClientContext c3;
  ASSERT_TRUE(v1::Node::NewStub(channel)->NodeGetCapabilities(ctx(c3), {}, &node).ok());
  std::set<int> node_has;
  for (const auto& cap : node.capabilities()) {
    node_has.insert(cap.rpc().type());
  }
  using node_rpc = v1::NodeServiceCapability::RPC;
  for (auto need : {node_rpc::STAGE_UNSTAGE_VOLUME, node_rpc::GET_VOLUME_STATS,
                    node_rpc::EXPAND_VOLUME}) {
    EXPECT_EQ(node_has.count(need), 1u)
      << "node capability " << node_rpc::Type_Name(need) << " is missing";
  }
}

