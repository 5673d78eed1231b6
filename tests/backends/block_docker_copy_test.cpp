// Snapshots and copies of the block backend's Docker volumes: -o from-snapshot and
// -o clone-of (their options without root), then with real loop devices and mounts: a
// snapshot of a mounted volume is taken with its filesystem frozen, and a copy keeps its
// source's filesystem and grows to the size asked for (root; skipped loudly without).

#include <fstream>

#include "backends/detail/block_helpers.hpp"
#include "backends/detail/fs_freeze.hpp"
#include "tests/backends/block_docker_fixture.hpp"

namespace berth {
namespace {

using namespace block_test;

// -- without root: the options ----------------------------------------------------

TEST(block_docker_copy_options, a_copy_needs_no_size_and_takes_a_larger_one) {
  test::temp_state state;
  block_backend b(state.path());
  auto got = b.validate_docker("c1", {{"from-snapshot", "s1"}});
  ASSERT_TRUE(got) << describe(got.error());
  EXPECT_EQ(*got, 0u) << "0: the source's size, which the registry reads";
  got = b.validate_docker("c1", {{"clone-of", "v1"}, {"size", "20000000"}, {"backend", "block"}});
  ASSERT_TRUE(got) << describe(got.error());
  EXPECT_EQ(*got, 20 * mib) << "rounded up; checked against the source's size later";
}

TEST(block_docker_copy_options, a_copy_is_refused_its_own_filesystem_owner_and_mode) {
  test::temp_state state;
  block_backend b(state.path());
  for (const auto& key : {"fstype", "uid", "gid", "mode"}) {
    SCOPED_TRACE(key);
    auto got = b.validate_docker("c1", {{"from-snapshot", "s1"}, {key, "1"}});
    ASSERT_FALSE(got);
    EXPECT_TRUE(mentions(got.error(), "a copy keeps its source's filesystem, owner and mode"))
      << describe(got.error());
  }
  auto both = b.validate_docker("c1", {{"from-snapshot", "s1"}, {"clone-of", "v1"}});
  ASSERT_FALSE(both);
  EXPECT_TRUE(mentions(both.error(), "from-snapshot and clone-of, not both"));
  auto itself = b.validate_docker("c1", {{"clone-of", "c1"}});
  ASSERT_FALSE(itself);
  EXPECT_TRUE(mentions(itself.error(), "names the volume itself"));
  auto bad = b.validate_docker("c1", {{"clone-of", "../v1"}});
  ASSERT_FALSE(bad);
  EXPECT_TRUE(mentions(bad.error(), "is not a name")) << describe(bad.error());
}

// -- with root: real loop devices, mkfs and mounts --------------------------------

class block_docker_copy_test : public block_docker_test {
protected:
  /// The record of a Docker snapshot of `volume`, as the volume actor makes it.
  volume_record snapshot_of(const std::string& name, const volume_record& volume) {
    volume_record rec;
    rec.name = name;
    rec.backend = "block";
    rec.owner = record_owner::docker;
    rec.kind = record_kind::snapshot;
    rec.source = volume_source(volume.name);
    rec.capacity_bytes = volume.capacity_bytes;
    return rec;
  }

  /// A Docker volume copied from `source` with `capacity` bytes.
  volume_record copy_of(const std::string& name, const content_source& source,
                        uint64_t capacity) {
    auto key = source.kind == record_kind::snapshot ? "from-snapshot" : "clone-of";
    auto rec = docker_record(name, {{key, source.name}});
    rec.source = source;
    rec.capacity_bytes = capacity;
    return rec;
  }

  static void write_file(const std::string& path, const std::string& text) {
    std::ofstream(path) << text; // no fsync: the snapshot's freeze must flush it
  }

  /// The exit status of a read-only check of the filesystem in `image`.
  static int fsck(const std::string& image, const std::string& fs_type) {
    auto res = fs_type == "xfs" ? run_helper({"xfs_repair", "-n", "--", image}, 60s)
                                : run_helper({"e2fsck", "-fn", "--", image}, 60s);
    EXPECT_TRUE(res);
    return res ? res->exit_code : -1;
  }
};

TEST_F(block_docker_copy_test, a_snapshot_of_a_mounted_volume_is_clean_and_holds_its_writes) {
  for (const std::string fs_type : {"ext4", "xfs"}) {
    SCOPED_TRACE(fs_type);
    auto vol = created("v-" + fs_type,
                       {{"size", fs_type == "xfs" ? "300M" : "32M"}, {"fstype", fs_type}});
    auto mp = backend_->mount(vol);
    ASSERT_TRUE(mp) << describe(mp.error());
    write_file(*mp + "/f", "written before the snapshot");
    auto snap = snapshot_of("s-" + fs_type, vol);
    ASSERT_FALSE(backend_->create(snap));
    if (fs_type == "ext4") {
      // A frozen ext4 has its journal flushed; a frozen xfs keeps its log, which the
      // copy's first mount replays (checked on the restored volume below).
      EXPECT_EQ(fsck(backend_->image_path(snap), fs_type), 0)
        << "the copy of a frozen ext4 checks clean";
    }
    auto thawed = thaw_filesystem(*mp);
    ASSERT_TRUE(thawed) << describe(thawed.error());
    EXPECT_FALSE(*thawed) << "the volume's filesystem is thawed after the copy";
    write_file(*mp + "/f", "written after the snapshot");

    auto restored = copy_of("r-" + fs_type, snapshot_source(snap.name), vol.capacity_bytes);
    ASSERT_FALSE(backend_->create(restored));
    auto rmp = backend_->mount(restored);
    ASSERT_TRUE(rmp) << describe(rmp.error()) << " (a copy mounts its source's " << fs_type << ")";
    auto mounted = block_mount_at(*rmp);
    ASSERT_TRUE(mounted);
    EXPECT_EQ(mounted->fstype, fs_type);
    EXPECT_EQ(read_text(*rmp + "/f"), "written before the snapshot");
    EXPECT_FALSE(backend_->unmount(restored, false));
    EXPECT_TRUE(wait_detached(backend_->image_path(restored)));
    EXPECT_EQ(fsck(backend_->image_path(restored), fs_type), 0)
      << "the volume made from the snapshot checks clean after its first mount";
    EXPECT_FALSE(backend_->unmount(vol, false));
  }
}

TEST_F(block_docker_copy_test, a_copy_says_whether_its_source_could_be_held_still) {
  auto vol = created("v1", {{"size", "32M"}});
  auto idle = backend_->create_copy(snapshot_of("s-idle", vol));
  ASSERT_TRUE(idle) << describe(idle.error());
  EXPECT_EQ(*idle, "") << "nothing attached: nothing could write";
  auto mp = backend_->mount(vol);
  ASSERT_TRUE(mp) << describe(mp.error());
  auto frozen = backend_->create_copy(snapshot_of("s-frozen", vol));
  ASSERT_TRUE(frozen) << describe(frozen.error());
  EXPECT_EQ(*frozen, "") << "its filesystem was frozen for the copy";
  ASSERT_FALSE(backend_->unmount(vol, false));
  ASSERT_TRUE(wait_detached(backend_->image_path(vol)));
  // Attached with nothing mounted, as a raw block volume is: its writers go on.
  auto device = attach_loop_device(backend_->image_path(vol));
  ASSERT_TRUE(device) << describe(device.error());
  auto raw = backend_->create_copy(snapshot_of("s-raw", vol));
  EXPECT_TRUE(detach_loop_device(*device) == caf::error{});
  ASSERT_TRUE(raw) << describe(raw.error());
  EXPECT_EQ(*raw, copy_crash_consistent);
  auto again = backend_->create_copy(snapshot_of("s-idle", vol));
  ASSERT_TRUE(again);
  EXPECT_EQ(*again, copy_crash_consistent) << "a copy made before is not vouched for";
}

TEST_F(block_docker_copy_test, a_copy_larger_than_its_source_gets_the_larger_filesystem) {
  for (const std::string fs_type : {"ext4", "xfs"}) {
    SCOPED_TRACE(fs_type);
    const uint64_t size = fs_type == "xfs" ? 300 * mib : 32 * mib;
    auto vol = created("v-" + fs_type, {{"size", std::to_string(size)}, {"fstype", fs_type}});
    auto mp = backend_->mount(vol);
    ASSERT_TRUE(mp) << describe(mp.error());
    write_file(*mp + "/f", "cloned");
    auto before = fs_total(*mp);
    auto clone = copy_of("c-" + fs_type, volume_source(vol.name), size * 2);
    ASSERT_FALSE(backend_->create(clone)) << "a clone of a mounted volume";
    EXPECT_TRUE(wait_detached(backend_->image_path(clone))) << "nothing stays attached";
    EXPECT_FALSE(backend_->create(clone)) << "a retried create finds the clone";
    auto cmp = backend_->mount(clone);
    ASSERT_TRUE(cmp) << describe(cmp.error());
    EXPECT_GT(fs_total(*cmp), before + size / 2) << "grown to the size asked for";
    EXPECT_EQ(read_text(*cmp + "/f"), "cloned");
    EXPECT_FALSE(backend_->unmount(clone, false));
    EXPECT_FALSE(backend_->unmount(vol, false));
  }
}

TEST_F(block_docker_copy_test, a_foreign_mount_where_a_copy_would_grow_is_left_alone) {
  auto vol = created("v1", {{"size", "300M"}, {"fstype", "xfs"}});
  auto clone = copy_of("c1", volume_source(vol.name), 600 * mib);
  const auto mp = backend_->mountpoint(clone);
  fs::create_directories(mp);
  ASSERT_EQ(::mount("tmpfs", mp.c_str(), "tmpfs", 0, "size=1m"), 0);
  auto err = backend_->create(clone);
  ASSERT_TRUE(err) << "xfs grows only mounted, and the mountpoint is taken";
  EXPECT_EQ(code_of(err), ec::failed_precondition);
  EXPECT_TRUE(mentions(err, "not this volume's")) << describe(err);
  EXPECT_EQ(fs_total(mp), mib) << "the tmpfs was not grown, nor covered";
  EXPECT_TRUE(wait_detached(backend_->image_path(clone))) << "nothing stays attached";
  ::umount2(mp.c_str(), MNT_DETACH);
}

TEST_F(block_docker_copy_test, a_filesystem_frozen_by_someone_else_fails_the_snapshot) {
  auto vol = created("v1", {{"size", "32M"}});
  auto mp = backend_->mount(vol);
  ASSERT_TRUE(mp) << describe(mp.error());
  auto other = filesystem_freeze::freeze(*mp, "the test");
  ASSERT_TRUE(other) << describe(other.error());
  auto snap = snapshot_of("s1", vol);
  auto err = backend_->create(snap);
  ASSERT_TRUE(err);
  EXPECT_TRUE(mentions(err, "frozen already")) << describe(err);
  EXPECT_FALSE(fs::exists(backend_->image_path(snap))) << "no image of a failed snapshot";
  other->thaw();
  EXPECT_FALSE(backend_->create(snap)) << "once thawed, the snapshot is taken";
  EXPECT_FALSE(backend_->unmount(vol, false));
}

} // namespace
} // namespace berth
