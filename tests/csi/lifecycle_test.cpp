// The "done when": one volume through its whole CSI life with berthd
// restarted (SIGTERM, and SIGKILL) in the middle; and a reboot-style reconcile
// (everything unmounted and detached by hand, a new boot ID).

#include <filesystem>
#include <fstream>
#include <sstream>

#include "backends/loop_device.hpp"
#include "core/errors.hpp"
#include "tests/csi/csi_fixture.hpp"

namespace berth::csi_test {
namespace {

class LifecycleTest : public csi_fixture {
protected:
  void lifecycle_across_restart(bool crash);

  static size_t mount_count(const std::string& path) {
    size_t n = 0;
    for (auto& e : read_mountinfo()) {
      n += e.mount_point == path ? 1 : 0;
    }
    return n;
  }

  ::testing::AssertionResult expect_healthy(const std::string& id, const std::string& target,
                                            const std::string& staging) {
    v1::NodeGetVolumeStatsRequest req;
    req.set_volume_id(id);
    req.set_volume_path(target);
    req.set_staging_target_path(staging);
    v1::NodeGetVolumeStatsResponse resp;
    auto ok = code_is(grpc::StatusCode::OK, call(&Node::NodeGetVolumeStats, req, resp));
    if (ok && resp.volume_condition().abnormal()) {
      return ::testing::AssertionFailure() << "volume " << id << " abnormal at " << target
                                           << ": " << resp.ShortDebugString();
    }
    return ok;
  }
};

void LifecycleTest::lifecycle_across_restart(bool crash) {
  // create, stage, publish, write
  v1::Volume a;
  ASSERT_TRUE(create_volume("life", &a));
  auto a_staging = staging_path(a.volume_id());
  auto a_target = target_path(a.volume_id());
  ASSERT_TRUE(stage(a.volume_id(), a_staging));
  ASSERT_TRUE(publish(a.volume_id(), a_staging, a_target));
  ASSERT_EQ(write_file_sync(a_target + "/file", "written before everything"), 0);

  // expand while published
  auto before = statvfs_of(a_target);
  ASSERT_TRUE(before.has_value());
  v1::ControllerExpandVolumeResponse grown;
  ASSERT_TRUE(controller_expand(a.volume_id(), 2 * GiB, &grown));
  ASSERT_TRUE(node_expand(a.volume_id(), a_target, a_staging));
  auto after = statvfs_of(a_target);
  ASSERT_TRUE(after.has_value());
  EXPECT_GE(after->total_bytes, before->total_bytes + GiB * 9 / 10);

  // snapshot, restore into a new volume, stage it
  v1::Snapshot snap;
  ASSERT_TRUE(create_snapshot("life-snap", a.volume_id(), &snap));
  auto req = create_request("life-restored", static_cast<uint64_t>(grown.capacity_bytes()));
  req.mutable_volume_content_source()->mutable_snapshot()->set_snapshot_id(snap.snapshot_id());
  v1::Volume b;
  ASSERT_TRUE(create_volume(req, &b));
  auto b_staging = staging_path(b.volume_id());
  auto b_target = target_path(b.volume_id());
  ASSERT_TRUE(stage(b.volume_id(), b_staging));

  // -- restart in the middle ---------------------------------------------------------
  ASSERT_TRUE(restart(crash));
  EXPECT_EQ(mount_count(a_staging), 1u) << "the stage of " << a.volume_id() << " must stay";
  EXPECT_EQ(mount_count(a_target), 1u) << "the publication of " << a.volume_id() << " must stay";
  EXPECT_EQ(mount_count(b_staging), 1u) << "the stage of " << b.volume_id() << " must stay";
  EXPECT_EQ(read_file(a_target + "/file").value_or("<unreadable>"), "written before everything");

  // state is kept, everything answers
  v1::ControllerGetVolumeRequest get;
  get.set_volume_id(a.volume_id());
  v1::ControllerGetVolumeResponse got;
  ASSERT_RPC(OK, call(&Ctrl::ControllerGetVolume, get, got));
  EXPECT_EQ(got.volume().capacity_bytes(), grown.capacity_bytes());
  v1::ListVolumesResponse listed;
  ASSERT_RPC(OK, call(&Ctrl::ListVolumes, v1::ListVolumesRequest{}, listed));
  EXPECT_EQ(listed.entries_size(), 2) << listed.ShortDebugString();
  v1::ListSnapshotsRequest lsreq;
  lsreq.set_snapshot_id(snap.snapshot_id());
  v1::ListSnapshotsResponse snaps;
  ASSERT_RPC(OK, call(&Ctrl::ListSnapshots, lsreq, snaps));
  EXPECT_EQ(snaps.entries_size(), 1) << snaps.ShortDebugString();
  EXPECT_TRUE(expect_healthy(a.volume_id(), a_target, a_staging));
  // kubelet repeats its calls after a plugin restart: they are no-ops.
  ASSERT_TRUE(stage(a.volume_id(), a_staging));
  ASSERT_TRUE(publish(a.volume_id(), a_staging, a_target));
  EXPECT_EQ(mount_count(a_staging), 1u);
  EXPECT_EQ(mount_count(a_target), 1u);

  // publish the restored volume and read the file
  ASSERT_TRUE(publish(b.volume_id(), b_staging, b_target));
  EXPECT_EQ(read_file(b_target + "/file").value_or("<unreadable>"), "written before everything");
  EXPECT_TRUE(expect_healthy(b.volume_id(), b_target, b_staging));

  // unpublish, unstage, delete all
  ASSERT_TRUE(unpublish(b.volume_id(), b_target));
  ASSERT_TRUE(unpublish(a.volume_id(), a_target));
  ASSERT_TRUE(unstage(b.volume_id(), b_staging));
  ASSERT_TRUE(unstage(a.volume_id(), a_staging));
  EXPECT_TRUE(delete_volume(b.volume_id()));
  v1::DeleteSnapshotRequest del;
  del.set_snapshot_id(snap.snapshot_id());
  v1::DeleteSnapshotResponse deleted;
  EXPECT_RPC(OK, call(&Ctrl::DeleteSnapshot, del, deleted));
  EXPECT_TRUE(delete_volume(a.volume_id()));
  EXPECT_TRUE(mounts_under(berthd().root()).empty());
  EXPECT_TRUE(loops_under(berthd().root()).empty());
  ASSERT_RPC(OK, call(&Ctrl::ListVolumes, v1::ListVolumesRequest{}, listed));
  EXPECT_EQ(listed.entries_size(), 0) << listed.ShortDebugString();
}

TEST_F(LifecycleTest, WholeLifeAcrossAGracefulRestart) {
  lifecycle_across_restart(false);
}

TEST_F(LifecycleTest, WholeLifeAcrossACrash) {
  lifecycle_across_restart(true);
}

// -- loop devices no record stages -----------------------------------------------------------

/// A crash between a loop attach and the commit of its stage leaves the image
/// attached with no record of it. The next start detaches such a device, and only
/// such a device: one a record stages, and one backed by a file outside berth's
/// image directory, stay.
TEST_F(LifecycleTest, StartDetachesLoopDevicesOfBerthImagesThatNoRecordStages) {
  v1::Volume left;
  v1::Volume kept;
  ASSERT_TRUE(create_volume("left-attached", &left));
  ASSERT_TRUE(create_volume("staged", &kept));
  auto staging = staging_path(kept.volume_id());
  ASSERT_TRUE(stage(kept.volume_id(), staging));
  auto staged_loop = mount_at(staging);
  ASSERT_TRUE(staged_loop.has_value());
  ASSERT_TRUE(berthd().stop() == 0) << "berthd should exit 0 on SIGTERM";

  // What the crash leaves: the unstaged volume's image on a loop device.
  auto image = berthd().state_dir() + "/block/volumes/" + left.volume_id() + ".img";
  ASSERT_TRUE(std::ifstream(image).good()) << "no image at " << image
                                           << " (where does the block backend keep them now?)";
  auto leftover = attach_loop_device(image);
  ASSERT_TRUE(leftover) << describe(leftover.error());
  // Not berth's: a file outside its image directory.
  auto foreign_image = berthd().root() + "/foreign.img";
  { std::ofstream(foreign_image).put('\0'); }
  std::filesystem::resize_file(foreign_image, 16 * MiB);
  auto foreign = attach_loop_device(foreign_image);
  ASSERT_TRUE(foreign) << describe(foreign.error());

  ASSERT_EQ(berthd().start(), "");
  ASSERT_TRUE(connect());
  EXPECT_EQ(loop_backing_file(*leftover), "")
    << *leftover << " (backing " << image << ") is still attached: no record stages it";
  EXPECT_NE(berthd().log_tail(200).find(*leftover), std::string::npos)
    << "the detach of " << *leftover << " is not logged";
  EXPECT_NE(loop_backing_file(*foreign), "") << *foreign << " is not berth's, yet was detached";
  EXPECT_NE(loop_backing_file(staged_loop->source), "")
    << "the staged volume's " << staged_loop->source << " was detached";
  EXPECT_TRUE(mount_at(staging).has_value()) << "the staged volume lost its staging mount";
  v1::NodeGetVolumeStatsRequest req;
  req.set_volume_id(kept.volume_id());
  req.set_volume_path(staging);
  v1::NodeGetVolumeStatsResponse resp;
  ASSERT_RPC(OK, call(&Node::NodeGetVolumeStats, req, resp));
  EXPECT_FALSE(resp.volume_condition().abnormal()) << resp.ShortDebugString();
  detach_loop_device(*foreign);
  // The unstaged volume stages normally afterwards.
  EXPECT_TRUE(stage(left.volume_id(), staging_path(left.volume_id())));
}

// -- reboot --------------------------------------------------------------------------------

/// Replaces the boot ID recorded in STATE/state/snapshot.json (written by the
/// start-up compaction, see persistence/file_store.hpp). Returns "" or the problem.
std::string forge_boot_id(const std::string& state_dir, const std::string& new_id) {
  auto path = state_dir + "/state/snapshot.json";
  auto text = read_file(path);
  if (!text) {
    return "no " + path + " (where does berthd record the boot id now?)";
  }
  const std::string key = "\"boot_id\":\"";
  auto pos = text->find(key);
  if (pos == std::string::npos) {
    return path + " has no \"boot_id\": " + text->substr(0, 200);
  }
  auto start = pos + key.size();
  auto end = text->find('"', start);
  if (end == std::string::npos || end == start) {
    return path + " has an empty or unterminated boot_id";
  }
  text->replace(start, end - start, new_id);
  if (int err = write_file_sync(path, *text); err != 0) {
    return "cannot write " + path;
  }
  return "";
}

TEST_F(LifecycleTest, AfterARebootVolumesExistUnstagedAndStageAgain) {
  v1::Volume a;
  v1::Volume b;
  ASSERT_TRUE(create_volume("boot-xfs", &a));
  ASSERT_TRUE(create_volume("boot-ext4", &b, {{"fsType", "ext4"}}));
  auto a_staging = staging_path(a.volume_id());
  auto a_target = target_path(a.volume_id());
  auto b_staging = staging_path(b.volume_id());
  auto b_target = target_path(b.volume_id());
  ASSERT_TRUE(stage(a.volume_id(), a_staging));
  ASSERT_TRUE(publish(a.volume_id(), a_staging, a_target));
  ASSERT_TRUE(stage(b.volume_id(), b_staging));
  ASSERT_TRUE(publish(b.volume_id(), b_staging, b_target));
  ASSERT_EQ(write_file_sync(a_target + "/file", "survives a reboot"), 0);
  ASSERT_EQ(write_file_sync(b_target + "/file", "ext4 survives too"), 0);

  // "Reboot": berthd stops, every mount and loop device is gone, the boot ID changes.
  ASSERT_EQ(berthd().stop(), 0) << "berthd should exit 0 on SIGTERM";
  ASSERT_EQ(clean_under(berthd().root()), "");
  ASSERT_TRUE(mounts_under(berthd().root()).empty());
  ASSERT_TRUE(loops_under(berthd().root()).empty());
  auto real = read_file("/proc/sys/kernel/random/boot_id").value_or("");
  auto forged = real.compare(0, 8, "00000000") == 0 ? "11111111-1111-1111-1111-111111111111"
                                                    : "00000000-0000-0000-0000-000000000000";
  ASSERT_EQ(forge_boot_id(berthd().state_dir(), forged), "");

  ASSERT_EQ(berthd().start(), "");
  ASSERT_TRUE(connect());
  EXPECT_TRUE(mounts_under(berthd().root()).empty())
    << "after a new boot nothing is staged: berthd must not mount at start";
  EXPECT_TRUE(loops_under(berthd().root()).empty())
    << "after a new boot nothing is staged: berthd must not attach at start";

  v1::ListVolumesResponse listed;
  ASSERT_RPC(OK, call(&Ctrl::ListVolumes, v1::ListVolumesRequest{}, listed));
  EXPECT_EQ(listed.entries_size(), 2) << listed.ShortDebugString();
  // Nothing is staged any more: a publish without a new stage is refused ...
  v1::NodePublishVolumeRequest early;
  early.set_volume_id(a.volume_id());
  early.set_staging_target_path(a_staging);
  early.set_target_path(a_target);
  *early.mutable_volume_capability() = mount_cap();
  v1::NodePublishVolumeResponse resp;
  EXPECT_RPC(FAILED_PRECONDITION, call(&Node::NodePublishVolume, early, resp))
    << "after a new boot the volume must not count as staged";

  // kubelet stages and publishes again: the loop device is attached again.
  ASSERT_TRUE(stage(a.volume_id(), a_staging));
  ASSERT_TRUE(publish(a.volume_id(), a_staging, a_target));
  ASSERT_TRUE(stage(b.volume_id(), b_staging));
  ASSERT_TRUE(publish(b.volume_id(), b_staging, b_target));
  EXPECT_EQ(mount_count(a_staging), 1u);
  EXPECT_EQ(mount_count(a_target), 1u);
  EXPECT_EQ(loops_under(berthd().root()).size(), 2u);
  EXPECT_EQ(read_file(a_target + "/file").value_or("<unreadable>"), "survives a reboot");
  EXPECT_EQ(read_file(b_target + "/file").value_or("<unreadable>"), "ext4 survives too");
  EXPECT_TRUE(expect_healthy(a.volume_id(), a_target, a_staging));

  ASSERT_TRUE(unpublish(a.volume_id(), a_target));
  ASSERT_TRUE(unpublish(b.volume_id(), b_target));
  ASSERT_TRUE(unstage(a.volume_id(), a_staging));
  ASSERT_TRUE(unstage(b.volume_id(), b_staging));
  EXPECT_TRUE(delete_volume(a.volume_id()));
  EXPECT_TRUE(delete_volume(b.volume_id()));
  EXPECT_TRUE(loops_under(berthd().root()).empty());
}

} // namespace
} // namespace berth::csi_test
