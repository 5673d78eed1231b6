// The block backend's node side with root: stage, publish, raw block, stats.
#include <fstream>
#include <thread>

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include "backends/block_backend.hpp"
#include "backends/detail/block_image.hpp"
#include "backends/loop_device.hpp"
#include "backends/mountinfo.hpp"
#include "tests/backends/block_fixture.hpp"

namespace berth {
namespace {

using namespace block_test;

TEST_F(block_backend_test, stage_formats_once_and_unstage_detaches) {
  auto rec = make_record("v1", 300 * mib); // the xfs minimum must be formattable
  create_and_stage(rec, {"noatime", "nodev"});
  EXPECT_TRUE(is_loop_device_path(rec.device));
  EXPECT_TRUE(is_mount_point(rec.staging_path));
  auto blkid = run_helper({"blkid", "-p", "-o", "value", "-s", "TYPE", rec.device}, 10s);
  ASSERT_TRUE(blkid);
  EXPECT_EQ(blkid->out, "xfs\n");
  auto again = backend_->stage(rec, {rec.staging_path, false, "", rec.stage_flags});
  ASSERT_TRUE(again) << describe(again.error());
  EXPECT_EQ(*again, rec.device) << "stage is idempotent";
  std::ofstream(rec.staging_path + "/kept.txt") << "survives a restage";

  ASSERT_FALSE(backend_->unstage(rec));
  EXPECT_FALSE(is_mount_point(rec.staging_path));
  EXPECT_TRUE(wait_detached(backend_->image_path(rec)));
  EXPECT_FALSE(backend_->unstage(rec)) << "unstage is idempotent";

  auto dev = backend_->stage(rec, {rec.staging_path, false, "", {}});
  ASSERT_TRUE(dev) << describe(dev.error());
  EXPECT_EQ(read_text(rec.staging_path + "/kept.txt"), "survives a restage") << "no re-mkfs";

  // Another filesystem than the one on the device is refused, never reformatted.
  ASSERT_FALSE(backend_->unstage(rec));
  auto wrong = backend_->stage(rec, {rec.staging_path, false, "ext4", {}});
  ASSERT_FALSE(wrong);
  EXPECT_EQ(code_of(wrong.error()), ec::failed_precondition);
  EXPECT_TRUE(mentions(wrong.error(), "xfs") && mentions(wrong.error(), "ext4"))
    << describe(wrong.error());
  EXPECT_TRUE(wait_detached(backend_->image_path(rec))) << "a failed stage leaves nothing attached";
  ASSERT_FALSE(backend_->remove(rec));
}

TEST_F(block_backend_test, bad_stage_requests_are_rejected_before_any_side_effect) {
  auto rec = make_record("v1", 32 * mib, "ext4");
  ASSERT_FALSE(backend_->create(rec));
  auto flag = backend_->stage(rec, {staging("v1"), false, "", {"noatime", "bogus=1"}});
  ASSERT_FALSE(flag);
  EXPECT_EQ(code_of(flag.error()), ec::invalid_argument);
  EXPECT_TRUE(mentions(flag.error(), "bogus=1")) << describe(flag.error());
  auto inject = backend_->stage(rec, {staging("v1"), false, "", {"data=ordered,context=x"}});
  ASSERT_FALSE(inject);
  EXPECT_TRUE(mentions(inject.error(), "context=x")) << describe(inject.error());
  auto fs_type = backend_->stage(rec, {staging("v1"), false, "vfat", {}});
  ASSERT_FALSE(fs_type);
  EXPECT_EQ(code_of(fs_type.error()), ec::invalid_argument);
  auto rel = backend_->stage(rec, {"relative/path", false, "", {}});
  ASSERT_FALSE(rel);
  EXPECT_EQ(code_of(rel.error()), ec::invalid_argument);
  auto dots = backend_->stage(rec, {staging("v1") + "/../../x", false, "", {}});
  ASSERT_FALSE(dots);
  fs::create_directories(root_ + "/elsewhere");
  fs::create_directories(fs::path(staging("link")).parent_path());
  fs::create_symlink(root_ + "/elsewhere", staging("link"));
  auto link = backend_->stage(rec, {staging("link"), false, "", {}});
  ASSERT_FALSE(link) << "a mount through a symlink would land where unstage never looks";
  EXPECT_EQ(code_of(link.error()), ec::invalid_argument);
  EXPECT_TRUE(mentions(link.error(), "symbolic link")) << describe(link.error());
  auto none = find_loop_device(backend_->image_path(rec));
  ASSERT_TRUE(none);
  EXPECT_EQ(*none, "");
  auto missing = make_record("nope", 32 * mib);
  auto nf = backend_->stage(missing, {staging("nope"), false, "", {}});
  ASSERT_FALSE(nf);
  EXPECT_EQ(code_of(nf.error()), ec::not_found);
}

TEST_F(block_backend_test, publish_read_write_and_read_only) {
  auto rec = make_record("v1", 32 * mib, "ext4");
  create_and_stage(rec, {"nosuid"});
  const std::string rw = target("v1", "pod-rw");
  const std::string ro = target("v1", "pod-ro");
  ASSERT_FALSE(publish(rec, rw, {false, false, {"noexec"}}));
  ASSERT_FALSE(publish(rec, rw, {false, false, {"noexec"}})) << "idempotent";
  ASSERT_FALSE(publish(rec, ro, {true, false, {}}));
  std::ofstream(rw + "/hello.txt") << "written through rw";
  EXPECT_EQ(read_text(ro + "/hello.txt"), "written through rw");
  errno = 0;
  int fd = ::open((ro + "/nope.txt").c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
  EXPECT_LT(fd, 0);
  EXPECT_EQ(errno, EROFS);
  struct statvfs vfs {};
  ASSERT_EQ(::statvfs(rw.c_str(), &vfs), 0);
  EXPECT_TRUE(vfs.f_flag & ST_NOEXEC);
  EXPECT_TRUE(vfs.f_flag & ST_NOSUID) << "the stage's flags survive the remount";
  EXPECT_FALSE(vfs.f_flag & ST_RDONLY);

  auto bad = publish(rec, target("v1", "pod-bad"), {false, false, {"shared"}});
  ASSERT_TRUE(bad);
  EXPECT_EQ(code_of(bad), ec::invalid_argument);
  EXPECT_FALSE(fs::exists(target("v1", "pod-bad")));

  ASSERT_FALSE(unpublish(rec, rw));
  EXPECT_FALSE(fs::exists(rw)) << "unpublish removes the target";
  EXPECT_FALSE(unpublish(rec, rw)) << "idempotent";
  ASSERT_FALSE(unpublish(rec, ro));
  EXPECT_FALSE(fs::exists(ro));
  EXPECT_TRUE(fs::exists(rec.staging_path + "/hello.txt")) << "only the bind went away";

  ASSERT_FALSE(backend_->unstage(rec));
  auto unstaged = publish(rec, rw, {false, false, {}});
  ASSERT_TRUE(unstaged);
  EXPECT_EQ(code_of(unstaged), ec::failed_precondition);
}

TEST_F(block_backend_test, raw_block_stage_publish_and_stats) {
  auto rec = make_record("b1", 64 * mib);
  ASSERT_FALSE(backend_->create(rec));
  stage_request req{staging("b1"), true, "", {}};
  auto dev = backend_->stage(rec, req);
  ASSERT_TRUE(dev) << describe(dev.error());
  EXPECT_EQ(*backend_->stage(rec, req), *dev);
  EXPECT_FALSE(is_mount_point(req.staging_path)) << "raw block mounts nothing at stage";
  rec.staging_path = req.staging_path;
  rec.staged_block = true;
  rec.device = *dev;

  const std::string file = target("b1");
  ASSERT_FALSE(publish(rec, file, {false, true, {}}));
  ASSERT_FALSE(publish(rec, file, {false, true, {}})) << "idempotent";
  struct stat st {};
  ASSERT_EQ(::stat(file.c_str(), &st), 0);
  EXPECT_TRUE(S_ISBLK(st.st_mode));
  auto size = block_device_size(file);
  ASSERT_TRUE(size);
  EXPECT_EQ(*size, 64 * mib);

  auto s = backend_->stats(rec, file);
  ASSERT_TRUE(s) << describe(s.error());
  EXPECT_TRUE(s->block);
  EXPECT_FALSE(s->abnormal) << s->message;
  EXPECT_EQ(s->total_bytes, 64 * mib);
  auto at_stage = backend_->stats(rec, rec.staging_path);
  ASSERT_TRUE(at_stage);
  EXPECT_FALSE(at_stage->abnormal) << at_stage->message;

  ASSERT_FALSE(backend_->expand(rec, 96 * mib));
  auto grown = backend_->grow_filesystem(rec);
  ASSERT_TRUE(grown) << describe(grown.error());
  EXPECT_EQ(*grown, 96 * mib) << "raw block: the device size";

  ASSERT_FALSE(unpublish(rec, file));
  EXPECT_FALSE(fs::exists(file)) << "the file target is deleted";
  EXPECT_TRUE(fs::exists(*dev)) << "never the device node itself";

  // Remove detaches a device that is still attached.
  ASSERT_FALSE(backend_->remove(rec));
  EXPECT_TRUE(wait_detached(backend_->image_path(rec)));
  EXPECT_FALSE(fs::exists(backend_->image_path(rec)));
  EXPECT_FALSE(backend_->unstage(rec)) << "unstage after remove is still success";
}

TEST_F(block_backend_test, remove_refuses_a_mounted_volume) {
  auto rec = make_record("v1", 32 * mib, "ext4");
  create_and_stage(rec);
  auto err = backend_->remove(rec);
  ASSERT_TRUE(err);
  EXPECT_EQ(code_of(err), ec::in_use);
  EXPECT_TRUE(fs::exists(backend_->image_path(rec)));
  ASSERT_FALSE(backend_->unstage(rec));
  ASSERT_FALSE(backend_->remove(rec));
  EXPECT_FALSE(fs::exists(backend_->image_path(rec)));
}

TEST_F(block_backend_test, snapshot_then_restore_into_a_new_volume) {
  auto rec = make_record("src", 300 * mib);
  create_and_stage(rec);
  const std::string pub = target("src");
  ASSERT_FALSE(publish(rec, pub, {false, false, {}}));
  std::ofstream(pub + "/data.txt") << "in the snapshot";

  volume_record snap;
  snap.name = "snap1";
  snap.backend = "block";
  snap.kind = record_kind::snapshot;
  snap.source = volume_source("src");
  volume_spec sspec;
  sspec.kind = record_kind::snapshot;
  sspec.source = snap.source;
  EXPECT_EQ(*backend_->choose_capacity(sspec), 300 * mib);
  ASSERT_FALSE(backend_->create(snap)) << "taken while the source is mounted";
  ASSERT_FALSE(backend_->create(snap)) << "idempotent";
  EXPECT_TRUE(fs::exists(root_ + "/block/snapshots/snap1.img"));
  std::ofstream(pub + "/later.txt") << "after the snapshot";

  auto restored = make_record("dst", 400 * mib);
  restored.source = snapshot_source("snap1");
  create_and_stage(restored); // while src is still mounted: same xfs UUID
  EXPECT_EQ(read_text(restored.staging_path + "/data.txt"), "in the snapshot");
  EXPECT_FALSE(fs::exists(restored.staging_path + "/later.txt"));
  auto grown = backend_->grow_filesystem(restored);
  ASSERT_TRUE(grown) << describe(grown.error());
  EXPECT_GT(*grown, fs_total(rec.staging_path) + 90 * mib)
    << "the copy (400 MiB) grew past its source (300 MiB)";

  auto missing = snap;
  missing.name = "snap2";
  missing.source = volume_source("nope");
  auto err = backend_->create(missing);
  ASSERT_TRUE(err);
  EXPECT_EQ(code_of(err), ec::not_found);
  EXPECT_TRUE(mentions(err, "nope")) << describe(err);

  ASSERT_FALSE(backend_->remove(snap));
  EXPECT_FALSE(fs::exists(root_ + "/block/snapshots/snap1.img"));
}

TEST_F(block_backend_test, stats_normal_then_abnormal_after_the_mount_vanishes) {
  auto rec = make_record("st", 64 * mib, "ext4");
  create_and_stage(rec);
  const std::string pub = target("st");
  ASSERT_FALSE(publish(rec, pub, {false, false, {}}));
  std::ofstream(pub + "/f.txt") << std::string(1 << 20, 'x');
  ::sync();
  auto s = backend_->stats(rec, pub);
  ASSERT_TRUE(s) << describe(s.error());
  EXPECT_FALSE(s->abnormal) << s->message;
  EXPECT_FALSE(s->block);
  EXPECT_GT(s->total_bytes, 32 * mib);
  EXPECT_LE(s->total_bytes, 64 * mib);
  EXPECT_GE(s->used_bytes, 1 * mib);
  EXPECT_GT(s->available_bytes, 0u);
  EXPECT_GT(s->total_inodes, 0u);
  EXPECT_GT(s->used_inodes, 0u);
  EXPECT_EQ(s->used_inodes + s->free_inodes, s->total_inodes);
  auto staged = backend_->stats(rec, rec.staging_path);
  ASSERT_TRUE(staged);
  EXPECT_EQ(staged->total_bytes, s->total_bytes);

  ASSERT_EQ(::umount2(pub.c_str(), MNT_DETACH), 0);
  auto gone = backend_->stats(rec, pub);
  ASSERT_TRUE(gone) << "an abnormal volume is a condition, not an error";
  EXPECT_TRUE(gone->abnormal);
  EXPECT_NE(gone->message.find(pub), std::string::npos) << gone->message;
  ASSERT_FALSE(unpublish(rec, pub));
  EXPECT_FALSE(fs::exists(pub));
}

} // namespace
} // namespace berth
