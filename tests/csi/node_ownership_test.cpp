// berth acts only on what it created or what its record holds (docs/design.md,
// "Only what berth owns"), against the real berthd through its gRPC socket:
// - node paths are confined to --kubelet-dir (after resolving the parent's symlinks);
// - a publish onto a mount that is not this volume's is refused;
// - unpublish and unstage unmount only this volume's mounts and delete only what
//   berth created;
// - an unstage or unpublish the record lacks cleans only this volume's leftovers
//   (what a crash between a side effect and its commit leaves).
// Foreign filesystems are tmpfs mounts the test makes itself; the volume's own
// leftovers are made by hand with losetup and mount(2), as a crash would leave them.

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>

#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tests/csi/csi_fixture.hpp"

namespace berth::csi_test {
namespace {

namespace fs = std::filesystem;

class NodeOwnershipTest : public csi_fixture {
protected:
  /// Mounts a small tmpfs at `path` (created) holding the file "foreign" = `tag`.
  static ::testing::AssertionResult mount_foreign(const std::string& path,
                                                  const std::string& tag = "not berth's") {
    fs::create_directories(path);
    if (::mount("tmpfs", path.c_str(), "tmpfs", 0, "size=1m") != 0) {
      return ::testing::AssertionFailure() << "mount tmpfs on " << path << ": "
                                           << std::strerror(errno);
    }
    if (write_file_sync(path + "/foreign", tag) != 0) {
      return ::testing::AssertionFailure() << "cannot write " << path << "/foreign";
    }
    return ::testing::AssertionSuccess();
  }

  /// True while the topmost mount at `path` is the test's tmpfs with its file intact.
  static bool foreign_intact(const std::string& path, const std::string& tag = "not berth's") {
    auto m = mount_at(path);
    return m && m->fstype == "tmpfs" && read_file(path + "/foreign").value_or("") == tag;
  }

  static size_t mount_count(const std::string& path) {
    size_t n = 0;
    for (auto& e : read_mountinfo()) {
      n += e.mount_point == path ? 1 : 0;
    }
    return n;
  }

  static bool exists(const std::string& path) {
    struct stat st {};
    return ::lstat(path.c_str(), &st) == 0;
  }

  /// The image file of block volume `id`.
  std::string image_of(const std::string& id) {
    return berthd().state_dir() + "/block/volumes/" + id + ".img";
  }

  /// Attaches the volume's image with losetup and mounts it at `path`: the host
  /// state a crash between a stage and its commit leaves. Returns the loop device.
  std::string stage_by_hand(const std::string& id, const std::string& path) {
    auto out = berthd().root() + "/losetup.out";
    auto cmd = "losetup --find --show " + image_of(id) + " > " + out;
    if (std::system(cmd.c_str()) != 0) {
      ADD_FAILURE() << cmd << " failed";
      return "";
    }
    auto dev = read_file(out).value_or("");
    while (!dev.empty() && dev.back() == '\n') {
      dev.pop_back();
    }
    fs::create_directories(path);
    if (::mount(dev.c_str(), path.c_str(), "xfs", 0, nullptr) != 0) {
      ADD_FAILURE() << "mount " << dev << " on " << path << ": " << std::strerror(errno);
    }
    return dev;
  }

  /// Creates, stages (mount) and returns volume `name`; `staging` gets its path.
  ::testing::AssertionResult staged_volume(const std::string& name, v1::Volume* vol,
                                           std::string* staging) {
    auto ok = create_volume(name, vol);
    if (!ok) {
      return ok;
    }
    *staging = staging_path(vol->volume_id());
    return stage(vol->volume_id(), *staging);
  }

  grpc::Status publish_status(const std::string& id, const std::string& staging,
                              const std::string& target,
                              const v1::VolumeCapability& cap = mount_cap(),
                              bool readonly = false) {
    v1::NodePublishVolumeRequest req;
    req.set_volume_id(id);
    req.set_staging_target_path(staging);
    req.set_target_path(target);
    *req.mutable_volume_capability() = cap;
    req.set_readonly(readonly);
    v1::NodePublishVolumeResponse resp;
    return call(&Node::NodePublishVolume, req, resp);
  }

  grpc::Status stage_status(const std::string& id, const std::string& staging,
                            const v1::VolumeCapability& cap = mount_cap()) {
    v1::NodeStageVolumeRequest req;
    req.set_volume_id(id);
    req.set_staging_target_path(staging);
    *req.mutable_volume_capability() = cap;
    v1::NodeStageVolumeResponse resp;
    return call(&Node::NodeStageVolume, req, resp);
  }

  grpc::Status unstage_status(const std::string& id, const std::string& staging) {
    v1::NodeUnstageVolumeRequest req;
    req.set_volume_id(id);
    req.set_staging_target_path(staging);
    v1::NodeUnstageVolumeResponse resp;
    return call(&Node::NodeUnstageVolume, req, resp);
  }

  grpc::Status unpublish_status(const std::string& id, const std::string& target) {
    v1::NodeUnpublishVolumeRequest req;
    req.set_volume_id(id);
    req.set_target_path(target);
    v1::NodeUnpublishVolumeResponse resp;
    return call(&Node::NodeUnpublishVolume, req, resp);
  }
};

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
