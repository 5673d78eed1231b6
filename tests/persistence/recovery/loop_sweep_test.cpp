// The start-up sweep of loop devices (persistence/recovery/loop_sweep): the choice as a plain
// function, then with real loop devices (root and /dev/loop-control; skipped
// loudly without them).

#include "persistence/recovery/loop_sweep.hpp"

#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/mount.h>
#include <unistd.h>

#include "backends/block_backend.hpp"
#include "backends/detail/fs_freeze.hpp"
#include "backends/helper_process.hpp"
#include "backends/loop_device.hpp"
#include "core/errors.hpp"
#include "tests/backends/temp_state.hpp"

using namespace berth;
namespace fs = std::filesystem;

namespace {

volume_record record(const std::string& name, const std::string& staging = "",
                     const std::string& device = "") {
  volume_record rec;
  rec.name = name;
  rec.backend = "block";
  rec.staging_path = staging;
  rec.device = device;
  return rec;
}

std::string image_of(const volume_record& rec) {
  return "/s/block/volumes/" + rec.name + ".img";
}

} // namespace

TEST(loop_sweep, chooses_berths_images_that_no_record_stages) {
  state_snapshot state;
  state.volumes["staged"] = record("staged", "/k/staging/staged", "/dev/loop1");
  state.volumes["old"] = record("old", "/k/staging/old"); // a record without its device
  state.volumes["unstaged"] = record("unstaged");
  loop_list loops{
    {"/dev/loop1", "/s/block/volumes/staged.img"},
    {"/dev/loop2", "/s/block/volumes/old.img"},
    {"/dev/loop3", "/s/block/volumes/unstaged.img"},
    {"/dev/loop4", "/s/block/volumes/gone.img"},
    {"/dev/loop5", "/s/block/volumes/removed.img (deleted)"},
    {"/dev/loop6", "/s/block/snapshots/snap.img"},
    {"/dev/loop7", "/other/disk.img"},
    {"/dev/loop8", "/s/block/volumesish/x.img"},
    {"/dev/loop10", "/s/block/operator-file.img"}, // in the block dir, not an image dir
    {"/dev/loop9", "/s/block/volumes/staged.img"}, // a second device on a staged image
  };
  auto chosen = loops_to_sweep(state, {"/s/block/volumes", "/s/block/snapshots/"}, image_of, loops);
  loop_list want{
    {"/dev/loop3", "/s/block/volumes/unstaged.img"},
    {"/dev/loop4", "/s/block/volumes/gone.img"},
    {"/dev/loop5", "/s/block/volumes/removed.img (deleted)"},
    {"/dev/loop6", "/s/block/snapshots/snap.img"},
  };
  EXPECT_EQ(chosen, want);
}

TEST(loop_sweep, keeps_the_device_of_a_mounted_docker_block_volume) {
  state_snapshot state;
  auto mounted = record("mounted");
  mounted.owner = record_owner::docker;
  mounted.mounted = true;
  mounted.mounts["c1"] = 1;
  auto unmounted = record("unmounted");
  unmounted.owner = record_owner::docker;
  state.volumes["mounted"] = mounted;
  state.volumes["unmounted"] = unmounted;
  loop_list loops{
    {"/dev/loop1", "/s/block/volumes/mounted.img"},
    {"/dev/loop2", "/s/block/volumes/unmounted.img"},
  };
  auto chosen = loops_to_sweep(state, {"/s/block/volumes"}, image_of, loops);
  EXPECT_EQ(chosen, (loop_list{{"/dev/loop2", "/s/block/volumes/unmounted.img"}}))
    << "a crash between a Docker Mount's attach and its commit leaves the second";
}

TEST(loop_sweep, chooses_nothing_without_an_image_dir) {
  loop_list loops{{"/dev/loop3", "/s/block/volumes/a.img"}, {"/dev/loop4", "/x"}};
  EXPECT_TRUE(loops_to_sweep({}, {}, image_of, loops).empty());
  EXPECT_TRUE(loops_to_sweep({}, {""}, image_of, loops).empty());
}

// -- with real loop devices -------------------------------------------------------------

class loop_sweep_test : public ::testing::Test {
protected:
  void SetUp() override {
    std::string why;
    if (!test::is_root()) {
      why = "needs root";
    } else if (::access("/dev/loop-control", R_OK | W_OK) != 0) {
      why = "needs loop devices (/dev/loop-control)";
    }
    if (!why.empty()) {
      std::cerr << "\n***** SKIPPED: loop sweep test " << why << " *****\n\n";
      GTEST_SKIP() << "SKIPPED: loop sweep test " << why;
    }
    root_ = fs::canonical(state_.path()).string();
    block_ = std::make_shared<block_backend>(root_);
  }

  void TearDown() override {
    for (const auto& dev : attached_) {
      detach_loop_device(dev);
    }
  }

  /// A 1 MiB file at `path`, attached to a loop device as `setup` says.
  std::string attach(const std::string& path, const loop_setup& setup = {}) {
    fs::create_directories(fs::path(path).parent_path());
    { std::ofstream(path).put('\0'); }
    fs::resize_file(path, 1 << 20);
    auto dev = attach_loop_device(path, setup);
    EXPECT_TRUE(dev) << describe(dev.error());
    if (!dev) {
      return {};
    }
    attached_.push_back(*dev);
    return *dev;
  }

  test::temp_state state_;
  std::string root_;
  std::shared_ptr<block_backend> block_;
  std::vector<std::string> attached_;
};

TEST_F(loop_sweep_test, detaches_only_loop_devices_of_berth_images_that_no_record_stages) {
  auto staged = attach(root_ + "/block/volumes/staged.img");
  auto unstaged = attach(root_ + "/block/volumes/unstaged.img");
  auto orphan = attach(root_ + "/block/volumes/orphan.img");
  auto foreign = attach(root_ + "/elsewhere/disk.img");
  ASSERT_FALSE(HasFailure());
  state_snapshot state;
  state.volumes["staged"] = record("staged", root_ + "/kubelet/staging/staged", staged);
  state.volumes["unstaged"] = record("unstaged");

  auto report = sweep_loop_devices(state, {{"block", block_}});
  EXPECT_EQ(report.detached, 2u);
  EXPECT_EQ(report.failed, 0u);
  EXPECT_EQ(*find_loop_device(root_ + "/block/volumes/unstaged.img"), "") << unstaged;
  EXPECT_EQ(*find_loop_device(root_ + "/block/volumes/orphan.img"), "") << orphan;
  EXPECT_EQ(*find_loop_device(root_ + "/block/volumes/staged.img"), staged)
    << "a record stages it";
  EXPECT_EQ(*find_loop_device(root_ + "/elsewhere/disk.img"), foreign) << "not berth's image";

  // Nothing more to do: a second sweep detaches nothing.
  EXPECT_EQ(sweep_loop_devices(state, {{"block", block_}}).detached, 0u);
  // Without a block backend there is no image directory: nothing is touched.
  state.volumes.erase("staged");
  EXPECT_EQ(sweep_loop_devices(state, {}).detached, 0u);
  EXPECT_EQ(*find_loop_device(root_ + "/block/volumes/staged.img"), staged);
}

TEST_F(loop_sweep_test, thaws_a_kept_filesystem_that_a_crash_left_frozen) {
  // A crash while a snapshot copies leaves the volume's filesystem frozen.
  const auto image = root_ + "/block/volumes/frozen.img";
  auto dev = attach(image);
  ASSERT_FALSE(dev.empty());
  auto made = run_helper({"mkfs.ext4", "-q", "-F", dev}, std::chrono::seconds(30));
  ASSERT_TRUE(made && made->exit_code == 0) << "mkfs.ext4";
  const auto mp = root_ + "/block/mounts/frozen";
  fs::create_directories(mp);
  ASSERT_EQ(::mount(dev.c_str(), mp.c_str(), "ext4", 0, nullptr), 0) << std::strerror(errno);
  auto frozen = run_helper({"fsfreeze", "-f", mp}, std::chrono::seconds(10));
  ASSERT_TRUE(frozen && frozen->exit_code == 0) << "fsfreeze -f";
  state_snapshot state;
  auto rec = record("frozen");
  rec.owner = record_owner::docker;
  rec.mounted = true;
  rec.mountpoint = mp;
  state.volumes["frozen"] = rec;

  auto report = sweep_loop_devices(state, {{"block", block_}});
  EXPECT_EQ(report.thawed, 1u);
  EXPECT_EQ(report.detached, 0u) << "a mounted record keeps its device";
  auto again = thaw_filesystem(mp);
  ASSERT_TRUE(again) << describe(again.error());
  EXPECT_FALSE(*again) << "no longer frozen";
  EXPECT_EQ(sweep_loop_devices(state, {{"block", block_}}).thawed, 0u) << "nothing to thaw";
  ::umount2(mp.c_str(), MNT_DETACH);
}

TEST_F(loop_sweep_test, a_kept_device_attached_without_direct_io_gets_it) {
  // As an older berthd attached every image: buffered, 512-byte blocks.
  loop_setup old;
  old.direct_io = false;
  old.block_size = 512;
  auto kept = attach(root_ + "/block/volumes/kept.img", old);
  auto opted_out = attach(root_ + "/block/volumes/buffered.img", old);
  ASSERT_FALSE(HasFailure());
  const auto image = root_ + "/block/volumes/kept.img";
  int fd = ::open(image.c_str(), O_RDONLY | O_DIRECT | O_CLOEXEC);
  if (fd < 0) {
    std::cerr << "\n***** SKIPPED: the test directory's filesystem has no O_DIRECT *****\n\n";
    GTEST_SKIP() << "SKIPPED: the test directory's filesystem has no O_DIRECT";
  }
  ::close(fd);
  state_snapshot state;
  state.volumes["kept"] = record("kept", root_ + "/kubelet/staging/kept", kept);
  auto buffered = record("buffered", root_ + "/kubelet/staging/buffered", opted_out);
  buffered.mutable_parameters = {{"directIO", "false"}};
  state.volumes["buffered"] = buffered;

  auto report = sweep_loop_devices(state, {{"block", block_}});
  EXPECT_EQ(report.direct_io_on, 1u);
  EXPECT_EQ(report.detached, 0u);
  EXPECT_TRUE(*loop_direct_io(kept)) << "upgraded in place, under its mount";
  EXPECT_EQ(*loop_block_size(kept), 512u) << "a block size cannot change while attached";
  EXPECT_FALSE(*loop_direct_io(opted_out)) << "its record says directIO=false";
  EXPECT_EQ(sweep_loop_devices(state, {{"block", block_}}).direct_io_on, 0u) << "done once";
}
