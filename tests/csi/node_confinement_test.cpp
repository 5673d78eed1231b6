// Node paths are confined to --kubelet-dir after resolving the parent's symlinks
// (docs/design.md, "Only what berth owns"), and a restage after a crash uses the fs_type
// of the stage; against the real berthd (node_ownership_fixture.hpp).

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>

#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tests/csi/node_ownership_fixture.hpp"

namespace berth::csi_test {
namespace {

namespace fs = std::filesystem;

// -- confinement to --kubelet-dir ------------------------------------------------------------

TEST_F(NodeOwnershipTest, NodePathsOutsideTheKubeletDirAreInvalidArgument) {
  v1::Volume vol;
  ASSERT_TRUE(create_volume("v", &vol));
  auto outside = berthd().root() + "/outside";
  fs::create_directories(outside + "/staging");
  EXPECT_RPC(INVALID_ARGUMENT, stage_status(vol.volume_id(), outside + "/staging"));
  EXPECT_FALSE(mount_at(outside + "/staging").has_value());
  EXPECT_TRUE(loops_under(berthd().root()).empty()) << "nothing is attached either";

  auto staging = staging_path(vol.volume_id());
  ASSERT_TRUE(stage(vol.volume_id(), staging));
  EXPECT_RPC(INVALID_ARGUMENT, publish_status(vol.volume_id(), staging, outside + "/target"));
  EXPECT_FALSE(exists(outside + "/target"));

  ASSERT_TRUE(mount_foreign(outside + "/mnt"));
  EXPECT_RPC(INVALID_ARGUMENT, unpublish_status(vol.volume_id(), outside + "/mnt"));
  EXPECT_RPC(INVALID_ARGUMENT, unstage_status(vol.volume_id(), outside + "/mnt"));
  EXPECT_TRUE(foreign_intact(outside + "/mnt"));
  EXPECT_RPC(INVALID_ARGUMENT, unstage_status(vol.volume_id(), berthd().kubelet_dir()))
    << "the kubelet dir itself is not under it";
  EXPECT_TRUE(unstage(vol.volume_id(), staging));
}

TEST_F(NodeOwnershipTest, ASymlinkedParentLeavingTheKubeletDirIsInvalidArgument) {
  v1::Volume vol;
  ASSERT_TRUE(create_volume("v", &vol));
  auto outside = berthd().root() + "/outside";
  fs::create_directories(outside + "/staging");
  fs::create_directories(berthd().kubelet_dir());
  auto link = berthd().kubelet_dir() + "/escape";
  fs::create_symlink(outside, link);
  EXPECT_RPC(INVALID_ARGUMENT, stage_status(vol.volume_id(), link + "/staging"));
  EXPECT_FALSE(mount_at(outside + "/staging").has_value());
  EXPECT_TRUE(loops_under(berthd().root()).empty());
}

TEST_F(NodeOwnershipTest, ASymlinkAsTheLastComponentIsInvalidArgument) {
  v1::Volume vol;
  std::string staging;
  ASSERT_TRUE(staged_volume("v", &vol, &staging));
  auto target = target_path(vol.volume_id());
  auto elsewhere = berthd().kubelet_dir() + "/elsewhere";
  fs::create_directories(elsewhere);
  fs::create_symlink(elsewhere, target);
  EXPECT_RPC(INVALID_ARGUMENT, publish_status(vol.volume_id(), staging, target));
  EXPECT_FALSE(mount_at(elsewhere).has_value());
  EXPECT_RPC(INVALID_ARGUMENT, unpublish_status(vol.volume_id(), target));
  EXPECT_TRUE(fs::is_symlink(target)) << "the link is not berth's to delete";
}

TEST_F(NodeOwnershipTest, ASymlinkedParentInsideTheKubeletDirIsOneStaging) {
  // /var/lib/kubelet is often a symlink: the same staging under two spellings.
  v1::Volume vol;
  ASSERT_TRUE(create_volume("v", &vol));
  auto staging = staging_path(vol.volume_id());
  auto alias = berthd().kubelet_dir() + "/alias";
  fs::create_symlink(berthd().kubelet_dir() + "/staging", alias);
  auto spelled = alias + "/" + vol.volume_id();
  ASSERT_TRUE(stage(vol.volume_id(), spelled));
  ASSERT_TRUE(stage(vol.volume_id(), spelled)) << "the second stage is a no-op";
  ASSERT_TRUE(stage(vol.volume_id(), staging)) << "the same staging, spelled canonically";
  EXPECT_EQ(mount_count(staging), 1u) << "staging through a symlinked parent mounted twice";
  auto target = target_path(vol.volume_id());
  ASSERT_TRUE(publish(vol.volume_id(), spelled, target));
  ASSERT_TRUE(unpublish(vol.volume_id(), target));
  ASSERT_TRUE(unstage(vol.volume_id(), spelled));
  EXPECT_FALSE(mount_at(staging).has_value());
  EXPECT_TRUE(loops_under(berthd().root()).empty());
}

// -- the fs_type asked for at stage is what a restart stages again ------------------------------

TEST_F(NodeOwnershipTest, ARestageAfterACrashUsesTheFsTypeOfTheStage) {
  v1::Volume vol;
  ASSERT_TRUE(create_volume("v", &vol)); // no fsType parameter: xfs by default
  auto staging = staging_path(vol.volume_id());
  ASSERT_TRUE(stage(vol.volume_id(), staging, mount_cap("ext4")));
  ASSERT_EQ(mount_at(staging).value_or(mount_entry{}).fstype, "ext4");
  berthd().kill9();
  ASSERT_EQ(::umount2(staging.c_str(), 0), 0) << std::strerror(errno);
  ASSERT_TRUE(restart(false));
  // Each volume reconciles in its own actor after the sockets open; a request on
  // the volume waits for that (read-only here, so it cannot stage by itself).
  v1::NodeGetVolumeStatsRequest sreq;
  sreq.set_volume_id(vol.volume_id());
  sreq.set_volume_path(staging);
  v1::NodeGetVolumeStatsResponse stats;
  ASSERT_RPC(OK, call(&Node::NodeGetVolumeStats, sreq, stats));
  auto m = mount_at(staging);
  ASSERT_TRUE(m.has_value()) << "reconcile did not stage the volume again";
  EXPECT_EQ(m->fstype, "ext4");
  EXPECT_TRUE(unstage(vol.volume_id(), staging));
}

} // namespace
} // namespace berth::csi_test
