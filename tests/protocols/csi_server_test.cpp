// The CSI server end to end in one process (csi_server_fixture.hpp): volumes,
// snapshots, node RPCs and the socket's life. Identity and capabilities:
// csi_capability_test.cpp.
// ControllerModifyVolume and expand-through-modify: csi_modify_server_test.cpp.

#include "protocols/csi/csi_server.hpp"

#include <filesystem>
#include <memory>

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

using csi_server_test = test::csi_server_fixture;

} // namespace

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

  // GetSnapshot (CSI 1.12) answers the snapshot, and NOT_FOUND for a volume's name.
  v1::GetSnapshotRequest get_snap;
  get_snap.set_snapshot_id("snap-1");
  v1::GetSnapshotResponse got_snap;
  grpc::ClientContext c6;
  st = stub->GetSnapshot(ctx(c6), get_snap, &got_snap);
  ASSERT_TRUE(st.ok()) << st.error_message();
  EXPECT_EQ(got_snap.snapshot().source_volume_id(), "pvc-1");
  EXPECT_EQ(got_snap.snapshot().creation_time().seconds(),
            snapped.snapshot().creation_time().seconds());
  get_snap.set_snapshot_id("pvc-1");
  grpc::ClientContext c7;
  st = stub->GetSnapshot(ctx(c7), get_snap, &got_snap);
  EXPECT_EQ(st.error_code(), StatusCode::NOT_FOUND) << st.error_message();
  get_snap.clear_snapshot_id();
  grpc::ClientContext c8;
  st = stub->GetSnapshot(ctx(c8), get_snap, &got_snap);
  EXPECT_EQ(st.error_code(), StatusCode::INVALID_ARGUMENT) << st.error_message();
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
  // A malformed staging path is the request's content: an unknown volume comes first.
  stage.set_staging_target_path("../escape");
  grpc::ClientContext c6;
  EXPECT_EQ(stub->NodeStageVolume(ctx(c6), stage, &staged).error_code(), StatusCode::NOT_FOUND);
  stage.set_volume_id("pvc-1");
  grpc::ClientContext c7;
  EXPECT_EQ(stub->NodeStageVolume(ctx(c7), stage, &staged).error_code(),
            StatusCode::INVALID_ARGUMENT);
}

// The refusal order (protocols/csi/refusal_order.hpp): a missing volume_path is
// INVALID_ARGUMENT even for an unknown volume; an unknown volume is NOT_FOUND; a
// volume_path where the volume is not, malformed or well formed, is NOT_FOUND; only
// then is the rest of the request's content refused.
TEST_F(csi_server_test, stats_and_expand_refuse_in_the_order_fields_volume_path_content) {
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
  for (const std::string id : {"never-created", "snap-1", "pvc-1"}) {
    SCOPED_TRACE("volume_id \"" + id + "\", no volume_path");
    auto st = stats(id, "");
    EXPECT_EQ(st.error_code(), StatusCode::INVALID_ARGUMENT) << st.error_message();
    EXPECT_EQ(st.error_message(), "volume_path is required");
    st = expand(id, "");
    EXPECT_EQ(st.error_code(), StatusCode::INVALID_ARGUMENT) << st.error_message();
  }
  for (const std::string path : {"some/path", "/a/../b", "/a/"}) {
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
    // The volume exists, and it cannot be at a path that is not absolute and normalized.
    st = stats("pvc-1", path);
    EXPECT_EQ(st.error_code(), StatusCode::NOT_FOUND) << st.error_message();
    EXPECT_NE(st.error_message().find("volume_path"), std::string::npos) << st.error_message();
    st = expand("pvc-1", path);
    EXPECT_EQ(st.error_code(), StatusCode::NOT_FOUND) << st.error_message();
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
