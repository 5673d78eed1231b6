// The cluster mode's snapshots end to end: `berthd controller` writes a BerthSnapshot on the
// source volume's node, that node's agent cuts it, and a volume restored from it is placed
// on the same node with the snapshot's content.

#include <filesystem>
#include <fstream>

#include "protocols/kube/snapshot_objects.hpp"
#include "tests/cluster/cluster_fixture.hpp"

namespace berth::cluster_test {

namespace {

std::string node_of(const v1::Volume& vol) {
  for (const auto& t : vol.accessible_topology()) {
    auto it = t.segments().find("topology.berth.csi.dev/node");
    if (it != t.segments().end()) {
      return it->second;
    }
  }
  return {};
}

} // namespace

TEST_F(cluster, a_snapshot_is_cut_on_its_volumes_node_and_a_restore_goes_there_with_its_content) {
  auto deadline = [] { return std::chrono::steady_clock::now() + std::chrono::seconds(10); };
  auto snapshot_of = [&](const std::string& csi_name) -> std::optional<kube::snapshot_object> {
    auto json = api().get_object(kube::berth_snapshots(), kube::object_name_for(csi_name), deadline());
    if (!json) {
      return std::nullopt;
    }
    auto obj = kube::parse_snapshot_object(*json);
    return obj ? std::optional<kube::snapshot_object>{std::move(*obj)} : std::nullopt;
  };
  auto stage = [&](const std::string& volume, const std::string& dir) {
    v1::NodeStageVolumeRequest req;
    req.set_volume_id(volume);
    req.set_staging_target_path(berthd(2).kubelet_dir() + "/" + dir);
    *req.mutable_volume_capability() = create_request(volume, 64 * mib, "").volume_capabilities(0);
    v1::NodeStageVolumeResponse resp;
    return node(2).NodeStageVolume(call().get(), req, &resp);
  };
  auto unstage = [&](const std::string& volume, const std::string& dir) {
    v1::NodeUnstageVolumeRequest req;
    req.set_volume_id(volume);
    req.set_staging_target_path(berthd(2).kubelet_dir() + "/" + dir);
    v1::NodeUnstageVolumeResponse resp;
    return node(2).NodeUnstageVolume(call().get(), req, &resp);
  };

  // A volume on n2, staged there and written to.
  v1::CreateVolumeResponse made;
  auto st = controller().CreateVolume(call().get(), create_request("cl-snap-src", 64 * mib, "n2"), &made);
  ASSERT_TRUE(st.ok()) << st.error_message() << logs();
  st = stage("cl-snap-src", "stage-snap-src");
  ASSERT_TRUE(st.ok()) << st.error_message() << logs();
  {
    std::ofstream out{berthd(2).kubelet_dir() + "/stage-snap-src/kept.txt"};
    out << "what the snapshot holds";
  }

  // The snapshot, taken while the volume is staged: cut on n2, answered ready.
  v1::CreateSnapshotRequest snap;
  snap.set_name("cl-snap");
  snap.set_source_volume_id("cl-snap-src");
  v1::CreateSnapshotResponse cut;
  st = controller().CreateSnapshot(call().get(), snap, &cut);
  ASSERT_TRUE(st.ok()) << st.error_message() << logs();
  EXPECT_TRUE(cut.snapshot().ready_to_use());
  EXPECT_EQ(cut.snapshot().source_volume_id(), "cl-snap-src");
  EXPECT_GE(cut.snapshot().size_bytes(), 64 * mib);
  auto obj = snapshot_of("cl-snap");
  ASSERT_TRUE(obj);
  EXPECT_EQ(obj->spec.node, "n2");
  EXPECT_EQ(obj->status.phase, "Ready");
  auto image = berthd(2).state_dir() + "/block/snapshots/cl-snap.img";
  EXPECT_TRUE(std::filesystem::exists(image)) << image;
  { // What is written after the snapshot is not in it.
    std::ofstream out{berthd(2).kubelet_dir() + "/stage-snap-src/kept.txt"};
    out << "written later";
  }
  v1::ListSnapshotsRequest list;
  list.set_source_volume_id("cl-snap-src");
  v1::ListSnapshotsResponse listed;
  st = controller().ListSnapshots(call().get(), list, &listed);
  ASSERT_TRUE(st.ok()) << st.error_message();
  ASSERT_EQ(listed.entries_size(), 1);
  EXPECT_EQ(listed.entries(0).snapshot().snapshot_id(), "cl-snap");

  // A restore whose topology excludes n2 is refused naming both nodes, and makes nothing.
  auto restore = create_request("cl-restored", 64 * mib, "n1");
  restore.mutable_volume_content_source()->mutable_snapshot()->set_snapshot_id("cl-snap");
  v1::CreateVolumeResponse restored;
  st = controller().CreateVolume(call().get(), restore, &restored);
  EXPECT_EQ(st.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED) << st.error_message();
  EXPECT_NE(st.error_message().find("n1"), std::string::npos) << st.error_message();
  EXPECT_NE(st.error_message().find("n2"), std::string::npos) << st.error_message();
  EXPECT_FALSE(object_of("cl-restored"));

  // Without requirements it goes to n2, with the snapshot's content.
  restore = create_request("cl-restored", 64 * mib, "");
  restore.mutable_volume_content_source()->mutable_snapshot()->set_snapshot_id("cl-snap");
  st = controller().CreateVolume(call().get(), restore, &restored);
  ASSERT_TRUE(st.ok()) << st.error_message() << logs();
  EXPECT_EQ(node_of(restored.volume()), "n2");
  st = stage("cl-restored", "stage-restored");
  ASSERT_TRUE(st.ok()) << st.error_message() << logs();
  EXPECT_EQ(text_of(berthd(2).kubelet_dir() + "/stage-restored/kept.txt"), "what the snapshot holds");
  ASSERT_TRUE(unstage("cl-restored", "stage-restored").ok());
  ASSERT_TRUE(unstage("cl-snap-src", "stage-snap-src").ok());

  // Deleted: OK once n2 removed it and the object is gone; again is OK.
  v1::DeleteSnapshotRequest del;
  del.set_snapshot_id("cl-snap");
  v1::DeleteSnapshotResponse deleted;
  st = controller().DeleteSnapshot(call().get(), del, &deleted);
  ASSERT_TRUE(st.ok()) << st.error_message() << logs();
  EXPECT_FALSE(snapshot_of("cl-snap"));
  EXPECT_FALSE(std::filesystem::exists(image)) << image;
  st = controller().DeleteSnapshot(call().get(), del, &deleted);
  EXPECT_TRUE(st.ok()) << st.error_message();
  for (const char* volume : {"cl-restored", "cl-snap-src"}) {
    v1::DeleteVolumeRequest gone;
    gone.set_volume_id(volume);
    v1::DeleteVolumeResponse ignored;
    st = controller().DeleteVolume(call().get(), gone, &ignored);
    EXPECT_TRUE(st.ok()) << volume << ": " << st.error_message();
  }
}

} // namespace berth::cluster_test
