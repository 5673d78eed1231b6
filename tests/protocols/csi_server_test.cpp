// The CSI server end to end in one process (csi_server_fixture.hpp): identity,
// capabilities, volumes, snapshots, node RPCs and the socket's life.
// ControllerModifyVolume and expand-through-modify: csi_modify_server_test.cpp.

#include "protocols/csi/csi_server.hpp"

#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <set>

#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <caf/all.hpp>
#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>

#include "core/errors.hpp"
#include "csi.grpc.pb.h"
#include "tests/protocols/csi_server_fixture.hpp"
#include "tests/protocols/test_util.hpp"

using namespace berth;
namespace v1 = ::csi::v1;
using grpc::StatusCode;

namespace {

class csi_server_test : public test::csi_server_fixture {
protected:
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
      {"service:" + std::to_string(service::VOLUME_ACCESSIBILITY_CONSTRAINTS), {[=] {
         v1::CreateVolumeRequest req;
         req.set_name("probe-topology");
         *req.add_volume_capabilities() = cap_of();
         (*req.mutable_accessibility_requirements()->add_requisite()->mutable_segments())
           ["topology.berth.csi.dev/node"] = "node-1";
         return rpc(&v1::Controller::Stub::CreateVolume, req);
       }, true}},
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

TEST_F(csi_server_test, serves_identity) {
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
TEST_F(csi_server_test, advertises_only_capabilities_whose_rpcs_work) {
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
TEST_F(csi_server_test, capability_probes_catch_rpcs_berth_does_not_serve) {
  using ctrl_rpc = v1::ControllerServiceCapability::RPC;
  auto ctrl_probe = controller_probes();
  EXPECT_FALSE(backed("PUBLISH_UNPUBLISH_VOLUME", &ctrl_probe.at(ctrl_rpc::PUBLISH_UNPUBLISH_VOLUME)));
  probe refused_field{[] { return grpc::Status{StatusCode::INVALID_ARGUMENT, "no"}; }, true};
  EXPECT_FALSE(backed("a field berth refuses", &refused_field));
  EXPECT_FALSE(backed("an unknown capability", nullptr));
}

TEST_F(csi_server_test, advertises_the_capabilities_berth_needs) {
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

TEST_F(csi_server_test, socket_is_group_accessible_only) {
  struct stat st {};
  ASSERT_EQ(::lstat(path.c_str(), &st), 0);
  EXPECT_TRUE(S_ISSOCK(st.st_mode));
  EXPECT_EQ(st.st_mode & 0777, 0660u);
}

TEST_F(csi_server_test, creates_lists_and_deletes_volumes) {
  v1::CreateVolumeResponse created;
  auto st = create_volume("pvc-b", &created);
  ASSERT_TRUE(st.ok()) << st.error_message();
  EXPECT_EQ(created.volume().volume_id(), "pvc-b");
  EXPECT_EQ(created.volume().capacity_bytes(), 1 << 20);
  EXPECT_EQ(created.volume().volume_context().at("fsType"), "xfs");
  EXPECT_EQ(created.volume().accessible_topology(0).segments().at("topology.berth.csi.dev/node"),
            "node-1");
  ASSERT_TRUE(create_volume("pvc-a", &created).ok());
  ASSERT_TRUE(create_volume("pvc-c", &created).ok());

  auto stub = v1::Controller::NewStub(channel);
  v1::ListVolumesRequest list;
  list.set_max_entries(2);
  v1::ListVolumesResponse page1;
  grpc::ClientContext c1;
  ASSERT_TRUE(stub->ListVolumes(ctx(c1), list, &page1).ok());
  ASSERT_EQ(page1.entries_size(), 2);
  EXPECT_EQ(page1.entries(0).volume().volume_id(), "pvc-a");
  EXPECT_EQ(page1.next_token(), "pvc-c");
  list.set_starting_token(page1.next_token());
  v1::ListVolumesResponse page2;
  grpc::ClientContext c2;
  ASSERT_TRUE(stub->ListVolumes(ctx(c2), list, &page2).ok());
  ASSERT_EQ(page2.entries_size(), 1);
  EXPECT_EQ(page2.next_token(), "");
  list.set_starting_token("nope");
  grpc::ClientContext c3;
  EXPECT_EQ(stub->ListVolumes(ctx(c3), list, &page2).error_code(), StatusCode::ABORTED);

  v1::DeleteVolumeRequest del;
  del.set_volume_id("pvc-a");
  v1::DeleteVolumeResponse ignored;
  grpc::ClientContext c4;
  ASSERT_TRUE(stub->DeleteVolume(ctx(c4), del, &ignored).ok());
  EXPECT_EQ(recs->count("pvc-a"), 0u);
  grpc::ClientContext c5;
  EXPECT_TRUE(stub->DeleteVolume(ctx(c5), del, &ignored).ok()); // idempotent
}

TEST_F(csi_server_test, keeps_volumes_and_snapshots_apart) {
  v1::CreateVolumeResponse created;
  ASSERT_TRUE(create_volume("pvc-1", &created).ok());
  auto stub = v1::Controller::NewStub(channel);
  v1::CreateSnapshotRequest snap;
  snap.set_name("snap-1");
  snap.set_source_volume_id("pvc-1");
  v1::CreateSnapshotResponse snapped;
  grpc::ClientContext c1;
  auto st = stub->CreateSnapshot(ctx(c1), snap, &snapped);
  ASSERT_TRUE(st.ok()) << st.error_message();
  EXPECT_EQ(snapped.snapshot().source_volume_id(), "pvc-1");
  EXPECT_TRUE(snapped.snapshot().ready_to_use());
  EXPECT_GT(snapped.snapshot().creation_time().seconds(), 0);

  // The snapshot's name is not a volume: create refuses, delete leaves it alone.
  EXPECT_EQ(create_volume("snap-1", &created).error_code(), StatusCode::ALREADY_EXISTS);
  v1::DeleteVolumeRequest del;
  del.set_volume_id("snap-1");
  v1::DeleteVolumeResponse ignored;
  grpc::ClientContext c2;
  ASSERT_TRUE(stub->DeleteVolume(ctx(c2), del, &ignored).ok());
  EXPECT_EQ(recs->count("snap-1"), 1u);
  v1::ControllerGetVolumeRequest get;
  get.set_volume_id("snap-1");
  v1::ControllerGetVolumeResponse got;
  grpc::ClientContext c3;
  EXPECT_EQ(stub->ControllerGetVolume(ctx(c3), get, &got).error_code(), StatusCode::NOT_FOUND);

  v1::ListSnapshotsRequest list;
  list.set_source_volume_id("pvc-1");
  v1::ListSnapshotsResponse listed;
  grpc::ClientContext c4;
  ASSERT_TRUE(stub->ListSnapshots(ctx(c4), list, &listed).ok());
  ASSERT_EQ(listed.entries_size(), 1);
  EXPECT_EQ(listed.entries(0).snapshot().snapshot_id(), "snap-1");
  list.set_snapshot_id("missing");
  grpc::ClientContext c5;
  ASSERT_TRUE(stub->ListSnapshots(ctx(c5), list, &listed).ok());
  EXPECT_EQ(listed.entries_size(), 0);
}

TEST_F(csi_server_test, answers_controller_queries) {
  auto stub = v1::Controller::NewStub(channel);
  v1::GetCapacityResponse cap;
  grpc::ClientContext c1;
  ASSERT_TRUE(stub->GetCapacity(ctx(c1), {}, &cap).ok());
  EXPECT_EQ(cap.available_capacity(), 12345);
  // ControllerGetCapabilities: see advertises_only_capabilities_whose_rpcs_work.
  v1::ControllerPublishVolumeResponse pub;
  grpc::ClientContext c3;
  EXPECT_EQ(stub->ControllerPublishVolume(ctx(c3), {}, &pub).error_code(),
            StatusCode::UNIMPLEMENTED);
  v1::ControllerExpandVolumeRequest expand;
  expand.set_volume_id("pvc-x");
  expand.mutable_capacity_range()->set_required_bytes(100);
  v1::ControllerExpandVolumeResponse expanded;
  grpc::ClientContext c4;
  EXPECT_EQ(stub->ControllerExpandVolume(ctx(c4), expand, &expanded).error_code(),
            StatusCode::NOT_FOUND);
}

TEST_F(csi_server_test, serves_node_rpcs) {
  v1::CreateVolumeResponse created;
  ASSERT_TRUE(create_volume("pvc-1", &created).ok());
  auto stub = v1::Node::NewStub(channel);
  v1::NodeGetInfoResponse info;
  grpc::ClientContext c1;
  ASSERT_TRUE(stub->NodeGetInfo(ctx(c1), {}, &info).ok());
  EXPECT_EQ(info.node_id(), "node-1");
  EXPECT_EQ(info.accessible_topology().segments().at("topology.berth.csi.dev/node"), "node-1");

  v1::NodePublishVolumeRequest pub;
  pub.set_volume_id("pvc-1");
  pub.set_target_path(dir.path + "/target");
  pub.set_staging_target_path(dir.path + "/staging");
  pub.mutable_volume_capability()->mutable_mount();
  pub.mutable_volume_capability()->mutable_access_mode()->set_mode(
    v1::VolumeCapability::AccessMode::SINGLE_NODE_WRITER);
  v1::NodePublishVolumeResponse ignored;
  grpc::ClientContext c2;
  auto st = stub->NodePublishVolume(ctx(c2), pub, &ignored);
  EXPECT_EQ(st.error_code(), StatusCode::FAILED_PRECONDITION) << st.error_message();

  v1::NodeStageVolumeRequest stage;
  stage.set_volume_id("pvc-1");
  stage.set_staging_target_path(dir.path + "/staging");
  *stage.mutable_volume_capability() = pub.volume_capability();
  v1::NodeStageVolumeResponse staged;
  grpc::ClientContext c3;
  ASSERT_TRUE(stub->NodeStageVolume(ctx(c3), stage, &staged).ok());
  grpc::ClientContext c4;
  EXPECT_TRUE(stub->NodePublishVolume(ctx(c4), pub, &ignored).ok());

  stage.set_volume_id("unknown");
  grpc::ClientContext c5;
  EXPECT_EQ(stub->NodeStageVolume(ctx(c5), stage, &staged).error_code(), StatusCode::NOT_FOUND);
  stage.set_staging_target_path("../escape");
  grpc::ClientContext c6;
  EXPECT_EQ(stub->NodeStageVolume(ctx(c6), stage, &staged).error_code(),
            StatusCode::INVALID_ARGUMENT);
}

// The spec's answer for a volume that does not exist is NOT_FOUND, also when the
// request's path is malformed; the path's shape is refused only for a volume that
// exists.
TEST_F(csi_server_test, stats_and_expand_of_an_unknown_volume_are_not_found_whatever_the_path) {
  v1::CreateVolumeResponse created;
  ASSERT_TRUE(create_volume("pvc-1", &created).ok());
  recs->at("pvc-1").staging_path = dir.path + "/staging";
  volume_record snap;
  snap.name = "snap-1";
  snap.kind = record_kind::snapshot;
  recs->emplace(snap.name, snap);
  auto stub = v1::Node::NewStub(channel);
  auto stats = [&](const std::string& id, const std::string& path) {
    v1::NodeGetVolumeStatsRequest req;
    req.set_volume_id(id);
    req.set_volume_path(path);
    v1::NodeGetVolumeStatsResponse resp;
    grpc::ClientContext c;
    return stub->NodeGetVolumeStats(ctx(c), req, &resp);
  };
  auto expand = [&](const std::string& id, const std::string& path, bool bad_capability = false) {
    v1::NodeExpandVolumeRequest req;
    req.set_volume_id(id);
    req.set_volume_path(path);
    if (bad_capability) {
      req.mutable_volume_capability()->mutable_access_mode()->set_mode(
        v1::VolumeCapability::AccessMode::MULTI_NODE_MULTI_WRITER);
    }
    v1::NodeExpandVolumeResponse resp;
    grpc::ClientContext c;
    return stub->NodeExpandVolume(ctx(c), req, &resp);
  };
  for (const std::string path : {"some/path", "", "/a/../b", "/a/"}) {
    SCOPED_TRACE("volume_path \"" + path + "\"");
    auto st = stats("never-created", path);
    EXPECT_EQ(st.error_code(), StatusCode::NOT_FOUND) << st.error_message();
    st = expand("never-created", path);
    EXPECT_EQ(st.error_code(), StatusCode::NOT_FOUND) << st.error_message();
    st = stats("snap-1", path);
    EXPECT_EQ(st.error_code(), StatusCode::NOT_FOUND) << "a snapshot is no volume: "
                                                      << st.error_message();
    st = expand("snap-1", path);
    EXPECT_EQ(st.error_code(), StatusCode::NOT_FOUND) << st.error_message();
    // The volume exists: now the path's shape is what is wrong.
    st = stats("pvc-1", path);
    EXPECT_EQ(st.error_code(), StatusCode::INVALID_ARGUMENT) << st.error_message();
    EXPECT_NE(st.error_message().find("volume_path"), std::string::npos) << st.error_message();
    st = expand("pvc-1", path);
    EXPECT_EQ(st.error_code(), StatusCode::INVALID_ARGUMENT) << st.error_message();
  }
  auto st = expand("never-created", dir.path + "/staging", true);
  EXPECT_EQ(st.error_code(), StatusCode::NOT_FOUND) << st.error_message();
  st = expand("pvc-1", dir.path + "/staging", true);
  EXPECT_EQ(st.error_code(), StatusCode::INVALID_ARGUMENT) << st.error_message();
  // A well-formed path where the volume is neither staged nor published.
  EXPECT_EQ(stats("pvc-1", dir.path + "/elsewhere").error_code(), StatusCode::NOT_FOUND);
  EXPECT_EQ(expand("pvc-1", dir.path + "/elsewhere").error_code(), StatusCode::NOT_FOUND);
  EXPECT_TRUE(stats("pvc-1", dir.path + "/staging").ok());
  EXPECT_TRUE(expand("pvc-1", dir.path + "/staging").ok());
}

TEST_F(csi_server_test, node_paths_are_confined_and_canonical_before_any_message) {
  v1::CreateVolumeResponse created;
  ASSERT_TRUE(create_volume("pvc-1", &created).ok());
  auto stub = v1::Node::NewStub(channel);
  v1::NodeStageVolumeRequest stage;
  stage.set_volume_id("pvc-1");
  stage.mutable_volume_capability()->mutable_mount();
  stage.mutable_volume_capability()->mutable_access_mode()->set_mode(
    v1::VolumeCapability::AccessMode::SINGLE_NODE_WRITER);
  v1::NodeStageVolumeResponse staged;
  test::temp_dir other;
  stage.set_staging_target_path(other.path + "/staging");
  grpc::ClientContext c1;
  auto st = stub->NodeStageVolume(ctx(c1), stage, &staged);
  EXPECT_EQ(st.error_code(), StatusCode::INVALID_ARGUMENT) << st.error_message();
  EXPECT_NE(st.error_message().find("kubelet"), std::string::npos) << st.error_message();
  EXPECT_TRUE(recs->at("pvc-1").staging_path.empty()) << "the registry was never asked";

  std::filesystem::create_directories(dir.path + "/real");
  std::filesystem::create_symlink(dir.path + "/real", dir.path + "/alias");
  stage.set_staging_target_path(dir.path + "/alias/staging");
  grpc::ClientContext c2;
  st = stub->NodeStageVolume(ctx(c2), stage, &staged);
  ASSERT_TRUE(st.ok()) << st.error_message();
  EXPECT_EQ(recs->at("pvc-1").staging_path,
            std::filesystem::canonical(dir.path).string() + "/real/staging")
    << "the volume actor gets the spelling mountinfo shows";

  v1::NodeUnpublishVolumeRequest unpub;
  unpub.set_volume_id("pvc-1");
  unpub.set_target_path(other.path + "/target");
  v1::NodeUnpublishVolumeResponse ignored;
  grpc::ClientContext c3;
  EXPECT_EQ(stub->NodeUnpublishVolume(ctx(c3), unpub, &ignored).error_code(),
            StatusCode::INVALID_ARGUMENT);
  v1::NodeUnstageVolumeRequest unstage;
  unstage.set_volume_id("pvc-1");
  unstage.set_staging_target_path(dir.path + "/alias");
  v1::NodeUnstageVolumeResponse unstaged;
  grpc::ClientContext c4;
  EXPECT_EQ(stub->NodeUnstageVolume(ctx(c4), unstage, &unstaged).error_code(),
            StatusCode::INVALID_ARGUMENT)
    << "a symlink as the last component";
}

TEST_F(csi_server_test, refuses_a_socket_another_process_serves) {
  csi_server second{*gw, reg, config()};
  auto err = second.start();
  ASSERT_TRUE(err);
  EXPECT_NE(describe(err).find("another live process"), std::string::npos) << describe(err);
}

TEST_F(csi_server_test, replaces_a_stale_socket) {
  srv->stop();
  // A socket file nobody listens on, as a crash leaves it.
  int fd = ::socket(AF_UNIX, SOCK_STREAM, 0);
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::snprintf(addr.sun_path, sizeof(addr.sun_path), "%s", path.c_str());
  ASSERT_EQ(::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0);
  ::close(fd);
  srv = std::make_unique<csi_server>(*gw, reg, config());
  auto err = srv->start();
  ASSERT_FALSE(err) << describe(err);
  auto stub = v1::Identity::NewStub(grpc::CreateChannel("unix:" + path,
                                                        grpc::InsecureChannelCredentials()));
  v1::ProbeResponse probe;
  grpc::ClientContext c;
  EXPECT_TRUE(stub->Probe(ctx(c), {}, &probe).ok());
}

TEST_F(csi_server_test, refuses_to_replace_a_regular_file) {
  srv->stop();
  { std::FILE* f = std::fopen(path.c_str(), "w"); ASSERT_TRUE(f); std::fclose(f); }
  csi_server other{*gw, reg, config()};
  auto err = other.start();
  ASSERT_TRUE(err);
  EXPECT_NE(describe(err).find("not a socket"), std::string::npos) << describe(err);
}
