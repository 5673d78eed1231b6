// CSI Node service: NodeGetInfo, NodeGetCapabilities, NodeStage/Unstage,
// NodePublish/Unpublish (mount and raw block). NodeGetVolumeStats and
// NodeExpandVolume: node_stats_test.cpp. Every effect is checked on the host:
// /proc/self/mountinfo, /sys/block, statvfs.

#include <cerrno>
#include <cstring>
#include <set>

#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

#include "tests/csi/node_fixture.hpp"

namespace berth::csi_test {
namespace {

using NodeRpc = v1::NodeServiceCapability::RPC;

// -- NodeGetInfo, NodeGetCapabilities ------------------------------------------------

TEST_F(NodeTest, NodeGetInfoNamesTheNodeAndItsTopology) {
  v1::NodeGetInfoResponse resp;
  ASSERT_RPC(OK, call(&Node::NodeGetInfo, v1::NodeGetInfoRequest{}, resp));
  EXPECT_EQ(resp.node_id(), node_id);
  auto& seg = resp.accessible_topology().segments();
  auto it = seg.find(topology_key);
  ASSERT_NE(it, seg.end()) << resp.ShortDebugString();
  EXPECT_EQ(it->second, node_id);
  EXPECT_GE(resp.max_volumes_per_node(), 0);
}

TEST_F(NodeTest, NodeGetCapabilitiesListsStageStatsExpandAndCondition) {
  v1::NodeGetCapabilitiesResponse resp;
  ASSERT_RPC(OK, call(&Node::NodeGetCapabilities, v1::NodeGetCapabilitiesRequest{}, resp));
  std::set<int> have;
  for (auto& cap : resp.capabilities()) {
    have.insert(cap.rpc().type());
  }
  for (auto want : {NodeRpc::STAGE_UNSTAGE_VOLUME, NodeRpc::GET_VOLUME_STATS,
                    NodeRpc::EXPAND_VOLUME, NodeRpc::VOLUME_CONDITION}) {
    EXPECT_EQ(have.count(want), 1u) << "missing " << NodeRpc::Type_Name(want) << " in "
                                    << resp.ShortDebugString();
  }
}

// -- NodeStageVolume ------------------------------------------------------------------

TEST_F(NodeTest, NodeStageWithMissingFieldsIsInvalidArgument) {
  v1::Volume vol;
  ASSERT_TRUE(create_volume("v", &vol));
  auto staging = staging_path(vol.volume_id());
  v1::NodeStageVolumeResponse resp;
  v1::NodeStageVolumeRequest full;
  full.set_volume_id(vol.volume_id());
  full.set_staging_target_path(staging);
  *full.mutable_volume_capability() = mount_cap();
  auto no_id = full;
  no_id.clear_volume_id();
  EXPECT_RPC(INVALID_ARGUMENT, call(&Node::NodeStageVolume, no_id, resp));
  auto no_path = full;
  no_path.clear_staging_target_path();
  EXPECT_RPC(INVALID_ARGUMENT, call(&Node::NodeStageVolume, no_path, resp));
  auto no_cap = full;
  no_cap.clear_volume_capability();
  EXPECT_RPC(INVALID_ARGUMENT, call(&Node::NodeStageVolume, no_cap, resp));
  EXPECT_FALSE(mount_at(staging).has_value());
}

TEST_F(NodeTest, NodeStageOfUnknownVolumeIsNotFound) {
  v1::NodeStageVolumeRequest req;
  req.set_volume_id("never-created");
  req.set_staging_target_path(staging_path("never-created"));
  *req.mutable_volume_capability() = mount_cap();
  v1::NodeStageVolumeResponse resp;
  EXPECT_RPC(NOT_FOUND, call(&Node::NodeStageVolume, req, resp));
}

TEST_F(NodeTest, NodeStageMountsXfsByDefaultAndIsIdempotent) {
  v1::Volume vol;
  ASSERT_TRUE(create_volume("v", &vol));
  auto staging = staging_path(vol.volume_id());
  ASSERT_TRUE(stage(vol.volume_id(), staging));
  auto m = mount_at(staging);
  ASSERT_TRUE(m.has_value()) << staging << " is not a mount point after NodeStageVolume";
  EXPECT_EQ(m->fstype, "xfs");
  EXPECT_EQ(m->source.compare(0, 9, "/dev/loop"), 0) << "source " << m->source;
  EXPECT_EQ(loop_backing_file(m->source).compare(0, berthd().root().size(), berthd().root()), 0)
    << m->source << " is backed by " << loop_backing_file(m->source);
  auto size = statvfs_of(staging);
  ASSERT_TRUE(size.has_value());
  EXPECT_GT(size->total_bytes, GiB * 8 / 10) << "a 1 GiB volume";
  EXPECT_LE(size->total_bytes, static_cast<uint64_t>(vol.capacity_bytes()));

  ASSERT_TRUE(stage(vol.volume_id(), staging)) << "the second stage must be a no-op";
  size_t count = 0;
  for (auto& e : read_mountinfo()) {
    count += e.mount_point == staging ? 1 : 0;
  }
  EXPECT_EQ(count, 1u) << "staging twice must not mount twice";
  EXPECT_EQ(loops_under(berthd().root()).size(), 1u) << "staging twice must not attach twice";
}

TEST_F(NodeTest, NodeStageMountsExt4ByParameter) {
  v1::Volume vol;
  ASSERT_TRUE(create_volume("v", &vol, {{"fsType", "ext4"}}));
  auto staging = staging_path(vol.volume_id());
  ASSERT_TRUE(stage(vol.volume_id(), staging));
  auto m = mount_at(staging);
  ASSERT_TRUE(m.has_value());
  EXPECT_EQ(m->fstype, "ext4");
}

// -- NodePublishVolume -------------------------------------------------------------------

TEST_F(NodeTest, NodePublishBeforeStageIsFailedPrecondition) {
  v1::Volume vol;
  ASSERT_TRUE(create_volume("v", &vol));
  v1::NodePublishVolumeRequest req;
  req.set_volume_id(vol.volume_id());
  req.set_staging_target_path(staging_path(vol.volume_id()));
  req.set_target_path(target_path(vol.volume_id()));
  *req.mutable_volume_capability() = mount_cap();
  v1::NodePublishVolumeResponse resp;
  EXPECT_RPC(FAILED_PRECONDITION, call(&Node::NodePublishVolume, req, resp));
  EXPECT_FALSE(mount_at(req.target_path()).has_value());
}

TEST_F(NodeTest, NodePublishWithMissingFieldsIsInvalidArgument) {
  v1::Volume vol;
  ASSERT_TRUE(create_volume("v", &vol));
  auto staging = staging_path(vol.volume_id());
  ASSERT_TRUE(stage(vol.volume_id(), staging));
  v1::NodePublishVolumeRequest full;
  full.set_volume_id(vol.volume_id());
  full.set_staging_target_path(staging);
  full.set_target_path(target_path(vol.volume_id()));
  *full.mutable_volume_capability() = mount_cap();
  v1::NodePublishVolumeResponse resp;
  auto no_id = full;
  no_id.clear_volume_id();
  EXPECT_RPC(INVALID_ARGUMENT, call(&Node::NodePublishVolume, no_id, resp));
  auto no_target = full;
  no_target.clear_target_path();
  EXPECT_RPC(INVALID_ARGUMENT, call(&Node::NodePublishVolume, no_target, resp));
  auto no_cap = full;
  no_cap.clear_volume_capability();
  EXPECT_RPC(INVALID_ARGUMENT, call(&Node::NodePublishVolume, no_cap, resp));
  auto no_staging = full;
  no_staging.clear_staging_target_path();
  EXPECT_RPC(INVALID_ARGUMENT, call(&Node::NodePublishVolume, no_staging, resp))
    << "STAGE_UNSTAGE_VOLUME is advertised: the staging path is required";
  EXPECT_FALSE(mount_at(full.target_path()).has_value());
}

TEST_F(NodeTest, NodePublishOfUnknownVolumeIsNotFound) {
  v1::NodePublishVolumeRequest req;
  req.set_volume_id("never-created");
  req.set_staging_target_path(staging_path("never-created"));
  req.set_target_path(target_path("never-created"));
  *req.mutable_volume_capability() = mount_cap();
  v1::NodePublishVolumeResponse resp;
  EXPECT_RPC(NOT_FOUND, call(&Node::NodePublishVolume, req, resp));
}

TEST_F(NodeTest, NodePublishBindMountsTheStagedFilesystem) {
  v1::Volume vol;
  ASSERT_TRUE(create_volume("v", &vol));
  auto staging = staging_path(vol.volume_id());
  auto target = target_path(vol.volume_id());
  ASSERT_TRUE(stage(vol.volume_id(), staging));
  ASSERT_TRUE(publish(vol.volume_id(), staging, target));
  auto s = mount_at(staging);
  auto t = mount_at(target);
  ASSERT_TRUE(s.has_value());
  ASSERT_TRUE(t.has_value()) << target << " is not a mount point after NodePublishVolume";
  EXPECT_EQ(t->dev, s->dev) << "the target must show the staged filesystem";
  EXPECT_EQ(t->fstype, "xfs");
  ASSERT_EQ(write_file_sync(target + "/hello", "through the target"), 0);
  EXPECT_EQ(read_file(staging + "/hello").value_or(""), "through the target");

  ASSERT_TRUE(publish(vol.volume_id(), staging, target)) << "the same publish again is OK";
  size_t count = 0;
  for (auto& e : read_mountinfo()) {
    count += e.mount_point == target ? 1 : 0;
  }
  EXPECT_EQ(count, 1u) << "publishing twice must not mount twice";

  // The same target with another capability is incompatible (spec: ALREADY_EXISTS).
  v1::NodePublishVolumeRequest ro;
  ro.set_volume_id(vol.volume_id());
  ro.set_staging_target_path(staging);
  ro.set_target_path(target);
  *ro.mutable_volume_capability() = mount_cap();
  ro.set_readonly(true);
  v1::NodePublishVolumeResponse resp;
  EXPECT_RPC(ALREADY_EXISTS, call(&Node::NodePublishVolume, ro, resp));
}

TEST_F(NodeTest, ReadonlyPublishRefusesWrites) {
  v1::Volume vol;
  ASSERT_TRUE(create_volume("v", &vol));
  auto staging = staging_path(vol.volume_id());
  auto rw = target_path(vol.volume_id(), "rw");
  auto ro = target_path(vol.volume_id(), "ro");
  ASSERT_TRUE(stage(vol.volume_id(), staging));
  ASSERT_TRUE(publish(vol.volume_id(), staging, rw));
  ASSERT_TRUE(publish(vol.volume_id(), staging, ro, mount_cap(), true));
  EXPECT_EQ(write_file_sync(ro + "/x", "no"), EROFS) << "a write through a readonly publish";
  EXPECT_EQ(write_file_sync(rw + "/y", "yes"), 0) << "the read-write publish stays writable";
  auto m = mount_at(ro);
  ASSERT_TRUE(m.has_value());
  EXPECT_EQ(m->options.compare(0, 3, "ro,"), 0) << "mount options " << m->options;
}

// ReadWriteOncePod: CSI v1.12's table for a second NodePublishVolume at another target
// (docs/design.md, "CSI").
TEST_F(NodeTest, ASingleWriterPublicationRefusesASecondTargetAndKeepsTheFirst) {
  v1::Volume vol;
  ASSERT_TRUE(create_volume("rwop", &vol));
  auto staging = staging_path(vol.volume_id());
  auto first = target_path(vol.volume_id(), "first");
  auto second = target_path(vol.volume_id(), "second");
  auto single = mount_cap("", Mode::SINGLE_NODE_SINGLE_WRITER);
  ASSERT_TRUE(stage(vol.volume_id(), staging, single));
  ASSERT_TRUE(publish(vol.volume_id(), staging, first, single));
  ASSERT_EQ(write_file_sync(first + "/data", "kept"), 0);
  auto refused = publish_status(vol.volume_id(), staging, second, single);
  EXPECT_EQ(refused.error_code(), grpc::StatusCode::FAILED_PRECONDITION);
  EXPECT_NE(refused.error_message().find("is published at " + first + " for a single writer"),
            std::string::npos)
    << refused.error_message();
  auto shared = publish_status(vol.volume_id(), staging, second, mount_cap(), true);
  EXPECT_EQ(shared.error_code(), grpc::StatusCode::FAILED_PRECONDITION)
    << "a reader at another target is refused as well";
  EXPECT_FALSE(mount_at(second).has_value()) << "nothing is mounted at the refused target";
  EXPECT_EQ(read_file(first + "/data").value_or(""), "kept") << "the first publication holds";
  EXPECT_TRUE(publish(vol.volume_id(), staging, first, single)) << "a re-publish is idempotent";
  ASSERT_TRUE(unpublish(vol.volume_id(), first));
  EXPECT_TRUE(publish(vol.volume_id(), staging, second, single))
    << "once the first target is unpublished, another may take it";
}

// -- raw block ----------------------------------------------------------------------------

TEST_F(NodeTest, RawBlockVolumeIsPublishedAsABlockDevice) {
  v1::Volume vol;
  ASSERT_TRUE(create_volume(create_request("blk", GiB, 0, {}, block_cap()), &vol));
  auto staging = staging_path(vol.volume_id());
  auto target = target_path(vol.volume_id());
  ASSERT_TRUE(stage(vol.volume_id(), staging, block_cap()));
  ASSERT_EQ(loops_under(berthd().root()).size(), 1u) << "a staged block volume is attached";
  auto loop = loops_under(berthd().root()).front();
  ASSERT_TRUE(publish(vol.volume_id(), staging, target, block_cap()));
  struct stat st {};
  ASSERT_EQ(::stat(target.c_str(), &st), 0) << target << ": " << std::strerror(errno);
  EXPECT_TRUE(S_ISBLK(st.st_mode)) << target << " is not a block device (mode " << std::oct
                                   << st.st_mode << ")";
  auto bytes = block_device_bytes(target);
  ASSERT_TRUE(bytes.has_value());
  EXPECT_EQ(*bytes, static_cast<uint64_t>(vol.capacity_bytes()));
  struct stat dev {};
  ASSERT_EQ(::stat(loop.c_str(), &dev), 0);
  EXPECT_EQ(st.st_rdev, dev.st_rdev) << "the target is " << loop;

  v1::NodeGetVolumeStatsRequest sreq;
  sreq.set_volume_id(vol.volume_id());
  sreq.set_volume_path(target);
  v1::NodeGetVolumeStatsResponse stats;
  ASSERT_RPC(OK, call(&Node::NodeGetVolumeStats, sreq, stats));
  auto* b = usage_of(stats, v1::VolumeUsage::BYTES);
  ASSERT_NE(b, nullptr) << stats.ShortDebugString();
  EXPECT_EQ(b->total(), vol.capacity_bytes());

  ASSERT_TRUE(unpublish(vol.volume_id(), target));
  EXPECT_FALSE(exists(target)) << "unpublish removes the file it published";
  ASSERT_TRUE(unstage(vol.volume_id(), staging));
  EXPECT_EQ(loop_backing_file(loop), "") << loop << " still attached after unstage";
}

// -- NodeUnpublish, NodeUnstage ---------------------------------------------------------------

TEST_F(NodeTest, UnpublishRemovesTheTargetAndIsIdempotent) {
  v1::Volume vol;
  ASSERT_TRUE(create_volume("v", &vol));
  auto staging = staging_path(vol.volume_id());
  auto target = target_path(vol.volume_id());
  ASSERT_TRUE(stage(vol.volume_id(), staging));
  ASSERT_TRUE(publish(vol.volume_id(), staging, target));
  ASSERT_TRUE(unpublish(vol.volume_id(), target));
  EXPECT_FALSE(mount_at(target).has_value()) << target << " still mounted";
  EXPECT_FALSE(exists(target)) << target << " not removed";
  EXPECT_TRUE(mount_at(staging).has_value()) << "unpublish must leave the stage";
  EXPECT_TRUE(unpublish(vol.volume_id(), target)) << "the second unpublish is OK";
  EXPECT_TRUE(unpublish(vol.volume_id(), target_path(vol.volume_id(), "never")))
    << "unpublish of a target never published is OK";
  v1::NodeUnpublishVolumeResponse resp;
  v1::NodeUnpublishVolumeRequest no_target;
  no_target.set_volume_id(vol.volume_id());
  EXPECT_RPC(INVALID_ARGUMENT, call(&Node::NodeUnpublishVolume, no_target, resp));
  v1::NodeUnpublishVolumeRequest no_id;
  no_id.set_target_path(target);
  EXPECT_RPC(INVALID_ARGUMENT, call(&Node::NodeUnpublishVolume, no_id, resp));
}

TEST_F(NodeTest, UnpublishAndUnstageTakeOffTheMountsOfAShutDownXfs) {
  // A filesystem that shut down answers EIO to a stat of its root: the mounts must still
  // come off, or kubelet could never clean up the pod.
  v1::Volume vol;
  ASSERT_TRUE(create_volume("v", &vol));
  auto staging = staging_path(vol.volume_id());
  auto target = target_path(vol.volume_id());
  ASSERT_TRUE(stage(vol.volume_id(), staging));
  ASSERT_TRUE(publish(vol.volume_id(), staging, target));
  ASSERT_EQ(std::system(("xfs_io -x -c shutdown " + staging).c_str()), 0);
  ASSERT_TRUE(unpublish(vol.volume_id(), target));
  EXPECT_FALSE(mount_at(target).has_value()) << target << " still mounted";
  EXPECT_FALSE(exists(target)) << target << " not removed";
  ASSERT_TRUE(unstage(vol.volume_id(), staging));
  EXPECT_FALSE(mount_at(staging).has_value()) << staging << " still mounted";
}

TEST_F(NodeTest, UnstageUnmountsDetachesAndIsIdempotent) {
  v1::Volume vol;
  ASSERT_TRUE(create_volume("v", &vol));
  auto staging = staging_path(vol.volume_id());
  ASSERT_TRUE(stage(vol.volume_id(), staging));
  auto loop = device_at(staging);
  ASSERT_EQ(loop.compare(0, 9, "/dev/loop"), 0) << "staged on " << loop;
  ASSERT_TRUE(unstage(vol.volume_id(), staging));
  EXPECT_FALSE(mount_at(staging).has_value()) << staging << " still a mount point";
  EXPECT_EQ(loop_backing_file(loop), "") << loop << " still attached after unstage";
  EXPECT_TRUE(loops_under(berthd().root()).empty());
  EXPECT_TRUE(unstage(vol.volume_id(), staging)) << "the second unstage is OK";
  v1::NodeUnstageVolumeResponse resp;
  v1::NodeUnstageVolumeRequest no_path;
  no_path.set_volume_id(vol.volume_id());
  EXPECT_RPC(INVALID_ARGUMENT, call(&Node::NodeUnstageVolume, no_path, resp));
  v1::NodeUnstageVolumeRequest no_id;
  no_id.set_staging_target_path(staging);
  EXPECT_RPC(INVALID_ARGUMENT, call(&Node::NodeUnstageVolume, no_id, resp));
  // Staged again after an unstage: same data, attached again.
  ASSERT_TRUE(stage(vol.volume_id(), staging));
  EXPECT_TRUE(mount_at(staging).has_value());
  ASSERT_TRUE(unstage(vol.volume_id(), staging));
  EXPECT_TRUE(delete_volume(vol.volume_id()));
  EXPECT_TRUE(loops_under(berthd().root()).empty());
}

} // namespace
} // namespace berth::csi_test
