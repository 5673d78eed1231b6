// CSI Node service: NodeGetVolumeStats and NodeExpandVolume against the real berthd,
// checked through statvfs of the published target.

#include <sys/mount.h>

#include "tests/csi/node_fixture.hpp"

namespace berth::csi_test {

// -- NodeGetVolumeStats --------------------------------------------------------------------

TEST_F(NodeTest, NodeGetVolumeStatsReportsUsageAndCondition) {
  v1::Volume vol;
  ASSERT_TRUE(create_volume("v", &vol));
  auto staging = staging_path(vol.volume_id());
  auto target = target_path(vol.volume_id());
  ASSERT_TRUE(stage(vol.volume_id(), staging));
  ASSERT_TRUE(publish(vol.volume_id(), staging, target));
  ASSERT_EQ(write_file_sync(target + "/data", std::string(4 * MiB, 'x')), 0);
  auto host = statvfs_of(target);
  ASSERT_TRUE(host.has_value());

  v1::NodeGetVolumeStatsRequest req;
  req.set_volume_id(vol.volume_id());
  req.set_volume_path(target);
  req.set_staging_target_path(staging);
  v1::NodeGetVolumeStatsResponse resp;
  ASSERT_RPC(OK, call(&Node::NodeGetVolumeStats, req, resp));
  auto* bytes = usage_of(resp, v1::VolumeUsage::BYTES);
  auto* inodes = usage_of(resp, v1::VolumeUsage::INODES);
  ASSERT_NE(bytes, nullptr) << resp.ShortDebugString();
  ASSERT_NE(inodes, nullptr) << resp.ShortDebugString();
  EXPECT_NEAR(static_cast<double>(bytes->total()), static_cast<double>(host->total_bytes),
              static_cast<double>(host->total_bytes) / 100)
    << "total bytes against statvfs of the target";
  EXPECT_GE(bytes->used(), static_cast<int64_t>(4 * MiB));
  EXPECT_GT(bytes->available(), 0);
  EXPECT_LE(bytes->used() + bytes->available(), bytes->total());
  EXPECT_NEAR(static_cast<double>(inodes->total()), static_cast<double>(host->total_inodes),
              static_cast<double>(host->total_inodes) / 100)
    << "total inodes against statvfs of the target";
  EXPECT_GE(inodes->used(), 1);
  EXPECT_FALSE(resp.volume_condition().abnormal()) << resp.ShortDebugString();

  // The mount vanishes behind berthd's back: the condition says so.
  ASSERT_EQ(::umount2(target.c_str(), MNT_DETACH), 0) << std::strerror(errno);
  ASSERT_RPC(OK, call(&Node::NodeGetVolumeStats, req, resp));
  EXPECT_TRUE(resp.volume_condition().abnormal()) << resp.ShortDebugString();
  EXPECT_FALSE(resp.volume_condition().message().empty());
  EXPECT_TRUE(unpublish(vol.volume_id(), target)) << "unpublish of a vanished mount is OK";
}

TEST_F(NodeTest, NodeGetVolumeStatsOfUnknownVolumeOrPathIsNotFound) {
  v1::NodeGetVolumeStatsResponse resp;
  v1::NodeGetVolumeStatsRequest unknown;
  unknown.set_volume_id("never-created");
  unknown.set_volume_path(berthd().root());
  EXPECT_RPC(NOT_FOUND, call(&Node::NodeGetVolumeStats, unknown, resp));
  v1::Volume vol;
  ASSERT_TRUE(create_volume("v", &vol));
  v1::NodeGetVolumeStatsRequest not_there;
  not_there.set_volume_id(vol.volume_id());
  not_there.set_volume_path(target_path(vol.volume_id()));
  EXPECT_RPC(NOT_FOUND, call(&Node::NodeGetVolumeStats, not_there, resp));
  v1::NodeGetVolumeStatsRequest no_path;
  no_path.set_volume_id(vol.volume_id());
  EXPECT_RPC(INVALID_ARGUMENT, call(&Node::NodeGetVolumeStats, no_path, resp));
}

// Where a volume is: a path where it is neither staged nor published is NOT_FOUND,
// relative or absolute; the refusal order itself is refusal_order_test.cpp.
TEST_F(NodeTest, NodeGetVolumeStatsAnswersOnlyWhereTheVolumeIs) {
  v1::NodeGetVolumeStatsResponse resp;
  v1::NodeGetVolumeStatsRequest req;
  req.set_volume_id("never-created");
  req.set_volume_path("some/path");
  EXPECT_RPC(NOT_FOUND, call(&Node::NodeGetVolumeStats, req, resp));
  v1::Volume vol;
  ASSERT_TRUE(create_volume("v", &vol));
  req.set_volume_id(vol.volume_id());
  EXPECT_RPC(NOT_FOUND, call(&Node::NodeGetVolumeStats, req, resp));
  auto staging = staging_path(vol.volume_id());
  req.set_volume_path(staging);
  EXPECT_RPC(NOT_FOUND, call(&Node::NodeGetVolumeStats, req, resp)) << "not staged yet";
  ASSERT_TRUE(stage(vol.volume_id(), staging));
  EXPECT_RPC(OK, call(&Node::NodeGetVolumeStats, req, resp));
  req.set_volume_path(target_path(vol.volume_id()));
  EXPECT_RPC(NOT_FOUND, call(&Node::NodeGetVolumeStats, req, resp)) << "staged, not published";
}

// -- NodeExpandVolume ----------------------------------------------------------------------

void NodeTest::expand_while_published(const std::string& fs) {
  v1::Volume vol;
  ASSERT_TRUE(create_volume("v", &vol, {{"fsType", fs}}));
  auto staging = staging_path(vol.volume_id());
  auto target = target_path(vol.volume_id());
  ASSERT_TRUE(stage(vol.volume_id(), staging));
  ASSERT_TRUE(publish(vol.volume_id(), staging, target));
  ASSERT_EQ(write_file_sync(target + "/kept", "kept"), 0);
  auto before = statvfs_of(target);
  ASSERT_TRUE(before.has_value());

  v1::ControllerExpandVolumeResponse ctrl;
  ASSERT_TRUE(controller_expand(vol.volume_id(), 2 * GiB, &ctrl));
  EXPECT_TRUE(ctrl.node_expansion_required());
  v1::NodeExpandVolumeResponse node;
  ASSERT_TRUE(node_expand(vol.volume_id(), target, staging, &node));
  if (node.capacity_bytes() != 0) {
    EXPECT_GE(node.capacity_bytes(), static_cast<int64_t>(2 * GiB) * 8 / 10);
  }
  auto after = statvfs_of(target);
  ASSERT_TRUE(after.has_value());
  EXPECT_GE(after->total_bytes, before->total_bytes + GiB * 9 / 10)
    << fs << " seen through the target did not grow: " << before->total_bytes << " -> "
    << after->total_bytes << " bytes";
  EXPECT_EQ(read_file(target + "/kept").value_or(""), "kept");
  EXPECT_EQ(mount_at(target)->fstype, fs);
  // Idempotent: nothing more to grow is success.
  EXPECT_TRUE(node_expand(vol.volume_id(), target, staging));
}

TEST_F(NodeTest, NodeExpandGrowsXfsWhilePublished) {
  expand_while_published("xfs");
}

TEST_F(NodeTest, NodeExpandGrowsExt4WhilePublished) {
  expand_while_published("ext4");
}

TEST_F(NodeTest, NodeExpandOfUnknownVolumeIsNotFound) {
  v1::NodeExpandVolumeRequest req;
  req.set_volume_id("never-created");
  req.set_volume_path(berthd().root());
  v1::NodeExpandVolumeResponse resp;
  EXPECT_RPC(NOT_FOUND, call(&Node::NodeExpandVolume, req, resp));
}

} // namespace berth::csi_test
