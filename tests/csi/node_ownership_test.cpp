// berth acts only on what it created or what its record holds (docs/design.md,
// "Only what berth owns"), on the node: a publish onto a mount that is not this volume's
// is refused; unpublish and unstage unmount only this volume's mounts and delete only what
// berth created, and clean only this volume's leftovers. The confinement of node paths to
// --kubelet-dir is in node_confinement_test.cpp; the fixture, and how the foreign mounts
// and leftovers are made, in node_ownership_fixture.hpp.

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

// -- publish onto a mount ------------------------------------------------------------------

TEST_F(NodeOwnershipTest, PublishOntoAForeignMountIsFailedPrecondition) {
  v1::Volume vol;
  std::string staging;
  ASSERT_TRUE(staged_volume("v", &vol, &staging));
  auto target = target_path(vol.volume_id());
  ASSERT_TRUE(mount_foreign(target));
  EXPECT_RPC(FAILED_PRECONDITION, publish_status(vol.volume_id(), staging, target))
    << "the pod would write into someone else's filesystem";
  EXPECT_TRUE(foreign_intact(target));
  EXPECT_EQ(mount_count(target), 1u) << "nothing of the volume is mounted there";
  // Nothing was recorded: an unpublish leaves the foreign mount alone.
  EXPECT_TRUE(unpublish(vol.volume_id(), target));
  EXPECT_TRUE(foreign_intact(target));
}

TEST_F(NodeOwnershipTest, RawBlockPublishOntoAForeignMountIsFailedPrecondition) {
  v1::Volume vol;
  ASSERT_TRUE(create_volume(create_request("blk", GiB, 0, {}, block_cap()), &vol));
  auto staging = staging_path(vol.volume_id());
  ASSERT_TRUE(stage(vol.volume_id(), staging, block_cap()));
  auto target = target_path(vol.volume_id());
  ASSERT_TRUE(mount_foreign(target));
  EXPECT_RPC(FAILED_PRECONDITION, publish_status(vol.volume_id(), staging, target, block_cap()));
  EXPECT_TRUE(foreign_intact(target));
}

TEST_F(NodeOwnershipTest, PublishOntoThisVolumesOwnLeftoverMountIsOkAndUnpublishable) {
  // A crash between a publish and its commit leaves the bind; the record lacks it.
  v1::Volume vol;
  std::string staging;
  ASSERT_TRUE(staged_volume("v", &vol, &staging));
  auto target = target_path(vol.volume_id());
  fs::create_directories(target);
  ASSERT_EQ(::mount(staging.c_str(), target.c_str(), nullptr, MS_BIND, nullptr), 0)
    << std::strerror(errno);
  // An unpublish of a target the record lacks unmounts this volume's bind.
  ASSERT_TRUE(unpublish(vol.volume_id(), target));
  EXPECT_FALSE(mount_at(target).has_value()) << "the leftover bind of the volume stays mounted";
  EXPECT_TRUE(exists(target)) << "berth did not create it (per its record): left in place";
  // And a publish onto a leftover bind of this volume adopts it.
  ASSERT_EQ(::mount(staging.c_str(), target.c_str(), nullptr, MS_BIND, nullptr), 0)
    << std::strerror(errno);
  ASSERT_TRUE(publish(vol.volume_id(), staging, target));
  EXPECT_EQ(mount_count(target), 1u) << "the volume's own mount is adopted, not stacked";
  ASSERT_TRUE(unpublish(vol.volume_id(), target));
  EXPECT_FALSE(mount_at(target).has_value());
}

TEST_F(NodeOwnershipTest, PublishOntoThisVolumesReadonlyMountAsWritableAlreadyExists) {
  v1::Volume vol;
  std::string staging;
  ASSERT_TRUE(staged_volume("v", &vol, &staging));
  auto target = target_path(vol.volume_id());
  fs::create_directories(target);
  ASSERT_EQ(::mount(staging.c_str(), target.c_str(), nullptr, MS_BIND, nullptr), 0);
  ASSERT_EQ(::mount(nullptr, target.c_str(), nullptr, MS_REMOUNT | MS_BIND | MS_RDONLY, nullptr),
            0)
    << std::strerror(errno);
  EXPECT_RPC(ALREADY_EXISTS, publish_status(vol.volume_id(), staging, target))
    << "published there read-only, the request asks read-write";
  EXPECT_EQ(mount_count(target), 1u);
  ASSERT_TRUE(unpublish(vol.volume_id(), target));
  EXPECT_FALSE(mount_at(target).has_value());
}

TEST_F(NodeOwnershipTest, UnpublishLeavesAForeignMountStackedOnTheTarget) {
  v1::Volume vol;
  std::string staging;
  ASSERT_TRUE(staged_volume("v", &vol, &staging));
  auto target = target_path(vol.volume_id());
  ASSERT_TRUE(publish(vol.volume_id(), staging, target));
  ASSERT_TRUE(mount_foreign(target));
  EXPECT_RPC(FAILED_PRECONDITION, unpublish_status(vol.volume_id(), target))
    << "the volume's bind is under a foreign mount";
  EXPECT_TRUE(foreign_intact(target));
  ASSERT_EQ(::umount2(target.c_str(), 0), 0) << std::strerror(errno);
  EXPECT_TRUE(unpublish(vol.volume_id(), target)) << "once the foreign mount is gone";
  EXPECT_FALSE(exists(target));
}

TEST_F(NodeOwnershipTest, UnpublishTakesOffEveryStackedMountOfTheVolume) {
  // A publish repeated by hand stacks the volume's binds; one unpublish takes them all off,
  // topmost first, and then deletes the target it created.
  v1::Volume vol;
  std::string staging;
  ASSERT_TRUE(staged_volume("v", &vol, &staging));
  auto target = target_path(vol.volume_id());
  ASSERT_TRUE(publish(vol.volume_id(), staging, target));
  for (int i = 0; i < 2; ++i) {
    ASSERT_EQ(::mount(staging.c_str(), target.c_str(), nullptr, MS_BIND, nullptr), 0)
      << std::strerror(errno);
  }
  ASSERT_EQ(mount_count(target), 3u);
  ASSERT_TRUE(unpublish(vol.volume_id(), target));
  EXPECT_EQ(mount_count(target), 0u) << "a bind of the volume stayed at the target";
  EXPECT_FALSE(exists(target));
}

// -- files berth did not create ------------------------------------------------------------

TEST_F(NodeOwnershipTest, RawBlockUnpublishKeepsARegularFileBerthDidNotCreate) {
  v1::Volume vol;
  ASSERT_TRUE(create_volume(create_request("blk", GiB, 0, {}, block_cap()), &vol));
  auto staging = staging_path(vol.volume_id());
  ASSERT_TRUE(stage(vol.volume_id(), staging, block_cap()));
  auto target = target_path(vol.volume_id());
  ASSERT_EQ(write_file_sync(target, "precious"), 0);
  ASSERT_TRUE(publish(vol.volume_id(), staging, target, block_cap()));
  struct stat st {};
  ASSERT_EQ(::stat(target.c_str(), &st), 0);
  EXPECT_TRUE(S_ISBLK(st.st_mode)) << "the device is bound over the file";
  ASSERT_TRUE(unpublish(vol.volume_id(), target));
  EXPECT_EQ(read_file(target).value_or("<deleted>"), "precious")
    << "unpublish deleted a file berth did not create";
  EXPECT_TRUE(unstage(vol.volume_id(), staging));
}

TEST_F(NodeOwnershipTest, UnpublishKeepsADirectoryBerthDidNotCreate) {
  v1::Volume vol;
  std::string staging;
  ASSERT_TRUE(staged_volume("v", &vol, &staging));
  auto target = target_path(vol.volume_id());
  fs::create_directories(target); // an older kubelet makes the target itself
  ASSERT_TRUE(publish(vol.volume_id(), staging, target));
  ASSERT_TRUE(unpublish(vol.volume_id(), target));
  EXPECT_FALSE(mount_at(target).has_value());
  EXPECT_TRUE(exists(target)) << "the directory is the CO's, not berth's";
  // What berth creates, it removes.
  auto made = target_path(vol.volume_id(), "fresh");
  ASSERT_TRUE(publish(vol.volume_id(), staging, made));
  ASSERT_TRUE(unpublish(vol.volume_id(), made));
  EXPECT_FALSE(exists(made));
}

// -- unstage --------------------------------------------------------------------------------

TEST_F(NodeOwnershipTest, UnstageOfAnUnstagedVolumeLeavesAForeignMount) {
  v1::Volume vol;
  ASSERT_TRUE(create_volume("v", &vol));
  auto staging = staging_path(vol.volume_id());
  ASSERT_TRUE(mount_foreign(staging));
  EXPECT_TRUE(unstage(vol.volume_id(), staging)) << "not staged there per the record: OK";
  EXPECT_TRUE(foreign_intact(staging)) << "unstage swept a filesystem that is not berth's";
}

TEST_F(NodeOwnershipTest, UnstageAtAnotherPathThanTheRecordsLeavesAForeignMount) {
  v1::Volume vol;
  std::string staging;
  ASSERT_TRUE(staged_volume("v", &vol, &staging));
  auto other = staging_path("other");
  ASSERT_TRUE(mount_foreign(other));
  EXPECT_TRUE(unstage(vol.volume_id(), other));
  EXPECT_TRUE(foreign_intact(other));
  EXPECT_TRUE(mount_at(staging).has_value()) << "the recorded staging stays";
}

TEST_F(NodeOwnershipTest, UnstageCleansThisVolumesLeftoverStagingTheRecordLacks) {
  v1::Volume vol;
  ASSERT_TRUE(create_volume("v", &vol));
  auto staging = staging_path(vol.volume_id());
  ASSERT_TRUE(stage(vol.volume_id(), staging)); // formats the image
  ASSERT_TRUE(unstage(vol.volume_id(), staging));
  auto loop = stage_by_hand(vol.volume_id(), staging);
  ASSERT_FALSE(loop.empty());
  ASSERT_TRUE(mount_at(staging).has_value());
  ASSERT_TRUE(unstage(vol.volume_id(), staging));
  EXPECT_FALSE(mount_at(staging).has_value()) << "the volume's own leftover mount stays";
  EXPECT_TRUE(loops_under(berthd().root()).empty()) << "and its loop device stays attached";
}

TEST_F(NodeOwnershipTest, UnstageLeavesAForeignMountOverTheRecordedStaging) {
  v1::Volume vol;
  std::string staging;
  ASSERT_TRUE(staged_volume("v", &vol, &staging));
  ASSERT_TRUE(mount_foreign(staging));
  EXPECT_RPC(FAILED_PRECONDITION, unstage_status(vol.volume_id(), staging))
    << "the volume's mount is under a foreign one";
  EXPECT_TRUE(foreign_intact(staging));
  ASSERT_EQ(::umount2(staging.c_str(), 0), 0) << std::strerror(errno);
  EXPECT_TRUE(unstage(vol.volume_id(), staging));
  EXPECT_FALSE(mount_at(staging).has_value());
  EXPECT_TRUE(loops_under(berthd().root()).empty());
}

} // namespace
} // namespace berth::csi_test
