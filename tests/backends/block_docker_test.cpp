// The block backend's Docker volumes (block_docker.cpp): their options without root, then
// with real loop devices, mkfs and mounts (root; skipped loudly without them).

#include <cerrno>
#include <fstream>
#include <iostream>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "backends/detail/block_image.hpp"
#include "tests/backends/block_docker_fixture.hpp"

namespace berth {
namespace {

using namespace block_test;

// -- without root: the options ----------------------------------------------------

TEST(block_docker_options, a_size_gives_the_capacity_rounded_to_the_unit) {
  test::temp_state state;
  block_backend b(state.path());
  auto cap = [&](option_map options) { return b.validate_docker("v1", options); };
  EXPECT_EQ(*cap({{"backend", "block"}, {"size", "64M"}}), 64 * mib);
  EXPECT_EQ(*cap({{"size", "16M"}, {"fstype", "ext4"}}), 16 * mib);
  EXPECT_EQ(*cap({{"size", "20000000"}}), 20 * mib) << "rounded up to 1 MiB";
  EXPECT_EQ(*cap({{"size", "1G"}, {"fstype", "xfs"}, {"uid", "1000"}, {"gid", "1000"},
                  {"mode", "0750"}}),
            1024 * mib);
}

TEST(block_docker_options, each_refusal_names_the_option_and_what_to_do) {
  test::temp_state state;
  block_backend b(state.path());
  auto refused = [&](option_map options) {
    auto got = b.validate_docker("v1", options);
    EXPECT_FALSE(got);
    return got ? std::string("accepted") : describe(got.error());
  };
  EXPECT_NE(refused({{"backend", "block"}}).find("needs option size (e.g. -o size=10G)"),
            std::string::npos);
  auto msg = refused({{"size", "64m"}});
  EXPECT_NE(msg.find("size=\"64m\""), std::string::npos) << msg;
  EXPECT_NE(msg.find("K, M, G or T"), std::string::npos) << msg;
  EXPECT_NE(refused({{"size", "0"}}).find("must be positive"), std::string::npos);
  EXPECT_NE(refused({{"size", "18446744073709551615"}}).find("too large"), std::string::npos);
  msg = refused({{"size", "8M"}});
  EXPECT_NE(msg.find("smallest ext4 volume, 16M"), std::string::npos) << msg;
  msg = refused({{"size", "64M"}, {"fstype", "xfs"}});
  EXPECT_NE(msg.find("smallest xfs volume, 300M (give a larger size, or fstype=ext4)"),
            std::string::npos)
    << msg;
  EXPECT_NE(refused({{"size", "64M"}, {"fstype", "btrfs"}}).find("fstype=\"btrfs\""),
            std::string::npos);
  msg = refused({{"size", "64M"}, {"type", "ext4"}});
  EXPECT_NE(msg.find("give fstype=ext4 or fstype=xfs"), std::string::npos) << msg;
  msg = refused({{"size", "64M"}, {"colour", "red"}});
  EXPECT_NE(msg.find("(allowed: backend, size, fstype, uid, gid, mode, from-snapshot, clone-of)"), std::string::npos)
    << msg;
  EXPECT_NE(refused({{"size", "64M"}, {"uid", "-1"}}).find("uid"), std::string::npos);
  EXPECT_NE(refused({{"size", "64M"}, {"backend", "local"}}).find("not this backend"),
            std::string::npos);
  EXPECT_NE(refused({{"size", ""}}).find("is empty"), std::string::npos);
  EXPECT_FALSE(b.validate_docker("../x", {{"size", "64M"}}));
}

TEST(block_docker_options, a_resize_rounds_to_the_unit_without_a_csi_minimum) {
  test::temp_state state;
  block_backend b(state.path());
  auto rec = docker_record("v1", {{"backend", "block"}, {"size", "64M"}});
  rec.capacity_bytes = 64 * mib;
  // Docker's options name no fsType: read as CSI parameters they would ask xfs's 300M.
  EXPECT_EQ(*b.resize_capacity(rec, 128 * mib), 128 * mib);
  EXPECT_EQ(*b.resize_capacity(rec, 128 * mib + 1), 129 * mib);
  EXPECT_FALSE(b.resize_capacity(rec, UINT64_MAX));
  auto csi = rec;
  csi.owner = record_owner::csi;
  csi.options = {{"fsType", "xfs"}};
  EXPECT_EQ(*b.resize_capacity(csi, 128 * mib), 300 * mib) << "CSI keeps choose_capacity";
}

TEST(block_docker_options, only_a_docker_record_has_a_mountpoint) {
  test::temp_state state;
  block_backend b(state.path());
  const auto root = fs::canonical(state.path()).string();
  EXPECT_EQ(b.mountpoint(docker_record("v1", {})), root + "/block/mounts/v1");
  auto csi = docker_record("v1", {});
  csi.owner = record_owner::csi;
  EXPECT_EQ(b.mountpoint(csi), "");
  EXPECT_EQ(b.mountpoint(docker_record("..", {})), "");
}

// -- with root: real loop devices, mkfs and mounts (block_docker_fixture.hpp) ---------

TEST_F(block_docker_test, create_formats_and_leaves_nothing_attached) {
  auto rec = created("d1", {{"backend", "block"}, {"size", "32M"}});
  auto image = backend_->image_path(rec);
  EXPECT_EQ(*block_image_size(image), 32 * mib);
  auto device = find_loop_device(image);
  ASSERT_TRUE(device);
  EXPECT_EQ(*device, "") << "a created volume is attached only while mounted";
  auto probe = run_helper({"blkid", "-p", "-o", "value", "-s", "TYPE", "--", image}, 10s);
  ASSERT_TRUE(probe);
  EXPECT_EQ(probe->out, "ext4\n");
  EXPECT_FALSE(backend_->create(rec)) << "a retried create finds its image";
}

TEST_F(block_docker_test, mount_gives_the_size_and_a_write_past_it_fails_with_enospc) {
  auto rec = created("d1", {{"size", "32M"}});
  auto mp = backend_->mount(rec);
  ASSERT_TRUE(mp) << describe(mp.error());
  EXPECT_EQ(*mp, backend_->mountpoint(rec));
  EXPECT_TRUE(is_mounted(*mp));
  auto total = fs_total(*mp);
  EXPECT_GT(total, 24 * mib);
  EXPECT_LE(total, 32 * mib);
  auto [written, stopped] = fill(*mp + "/big", 64 * mib);
  EXPECT_EQ(stopped, ENOSPC);
  EXPECT_LE(written, 32 * mib);
  auto again = backend_->mount(rec);
  ASSERT_TRUE(again) << "mounted already is success";
  EXPECT_EQ(*again, *mp);
  ASSERT_FALSE(backend_->unmount(rec, false));
  EXPECT_FALSE(is_mounted(*mp));
  EXPECT_TRUE(wait_detached(backend_->image_path(rec))) << "the last Unmount detaches";
  EXPECT_FALSE(backend_->unmount(rec, false)) << "not mounted is success";
  ASSERT_FALSE(backend_->remove(rec));
  EXPECT_FALSE(fs::exists(backend_->image_path(rec)));
  EXPECT_FALSE(fs::exists(*mp));
}

TEST_F(block_docker_test, the_root_takes_the_owner_and_mode_of_the_options) {
  auto rec = created("d1", {{"size", "32M"}, {"uid", "1000"}, {"gid", "1001"}, {"mode", "0750"}});
  EXPECT_TRUE(wait_detached(backend_->image_path(rec)));
  auto mp = backend_->mount(rec);
  ASSERT_TRUE(mp) << describe(mp.error());
  struct stat st {};
  ASSERT_EQ(::stat(mp->c_str(), &st), 0);
  EXPECT_EQ(st.st_uid, 1000u);
  EXPECT_EQ(st.st_gid, 1001u);
  EXPECT_EQ(st.st_mode & 07777, 0750u);
  EXPECT_FALSE(backend_->unmount(rec, false));
}

/// True when this process may grow a mounted ext4 (EXT4_IOC_RESIZE_FS wants
/// CAP_SYS_RESOURCE, which some containers drop).
bool may_grow_ext4_online() {
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line)) {
    if (line.rfind("CapEff:", 0) == 0) {
      return (std::stoull(line.substr(7), nullptr, 16) >> 24 & 1) != 0; // CAP_SYS_RESOURCE
    }
  }
  return false;
}

TEST_F(block_docker_test, a_resize_while_mounted_grows_the_filesystem_online) {
  for (const std::string fs_type : {"xfs", "ext4"}) {
    SCOPED_TRACE(fs_type);
    auto name = "g-" + fs_type;
    auto rec = created(name, {{"size", fs_type == "xfs" ? "300M" : "32M"}, {"fstype", fs_type}});
    auto mp = backend_->mount(rec);
    ASSERT_TRUE(mp) << describe(mp.error());
    rec.mounted = true;
    rec.mountpoint = *mp;
    auto before = fs_total(*mp);
    auto err = backend_->modify(rec, modification{rec.capacity_bytes * 2, {}});
    if (fs_type == "ext4" && !may_grow_ext4_online()) {
      std::cerr << "***** this process lacks CAP_SYS_RESOURCE: ext4 cannot grow while "
                   "mounted; checking the refusal instead *****\n";
      ASSERT_TRUE(err);
      EXPECT_EQ(code_of(err), ec::failed_precondition);
      EXPECT_TRUE(mentions(err, "stop the volume's containers and resize again")) << describe(err);
      EXPECT_EQ(fs_total(*mp), before);
      // The resize failed, so nothing changed: the image is the record's size again.
      EXPECT_EQ(fs::file_size(backend_->image_path(rec)), rec.capacity_bytes);
    } else {
      ASSERT_FALSE(err) << describe(err);
      EXPECT_GT(fs_total(*mp), before + rec.capacity_bytes / 2) << "grown while mounted";
    }
    EXPECT_TRUE(is_mounted(*mp));
    EXPECT_FALSE(backend_->unmount(rec, false));
  }
}

TEST_F(block_docker_test, a_resize_while_unmounted_grows_the_filesystem_at_the_next_mount) {
  for (const std::string fs_type : {"ext4", "xfs"}) {
    SCOPED_TRACE(fs_type);
    const uint64_t size = fs_type == "xfs" ? 300 * mib : 32 * mib;
    auto rec = created("u-" + fs_type, {{"size", std::to_string(size)}, {"fstype", fs_type}});
    ASSERT_FALSE(backend_->modify(rec, modification{size * 2, {}}));
    rec.capacity_bytes = size * 2;
    rec.modifications = 1; // as the record is committed after the modify
    auto mp = backend_->mount(rec);
    ASSERT_TRUE(mp) << describe(mp.error());
    EXPECT_GT(fs_total(*mp), size * 3 / 2);
    EXPECT_FALSE(backend_->unmount(rec, false));
    EXPECT_EQ(code_of(backend_->modify(rec, modification{size, {}})), ec::out_of_range)
      << "a shrink is refused";
  }
}

TEST_F(block_docker_test, a_foreign_mount_at_the_mountpoint_is_left_alone) {
  auto rec = created("d1", {{"size", "32M"}});
  const auto mp = backend_->mountpoint(rec);
  fs::create_directories(mp);
  ASSERT_EQ(::mount("tmpfs", mp.c_str(), "tmpfs", 0, "size=1m"), 0);
  auto got = backend_->mount(rec);
  ASSERT_FALSE(got);
  EXPECT_EQ(code_of(got.error()), ec::failed_precondition);
  EXPECT_TRUE(mentions(got.error(), "not this volume's")) << describe(got.error());
  EXPECT_TRUE(wait_detached(backend_->image_path(rec))) << "a failed mount detaches again";
  EXPECT_FALSE(backend_->unmount(rec, false));
  EXPECT_TRUE(is_mounted(mp)) << "the tmpfs stays";
  ::umount2(mp.c_str(), MNT_DETACH);
}

} // namespace
} // namespace berth
