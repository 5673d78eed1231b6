// How a loop device is set up when attached: LOOP_CONFIGURE (or, as on an older kernel,
// step by step) with direct I/O and a block size chosen from what the image holds. Real
// loop devices: root and /dev/loop-control, or the tests skip loudly.

#include <string>

#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include "backends/helper_process.hpp"
#include "backends/loop_device.hpp"
#include "core/errors.hpp"
#include "loop_fixture.hpp"

namespace berth {
namespace {

using loop_test::make_image;

/// Whether the filesystem holding `path` lets it be opened with O_DIRECT: what the kernel
/// then gives a loop device asking for direct I/O.
bool can_direct_io(const std::string& path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_DIRECT | O_CLOEXEC);
  if (fd < 0) {
    return false;
  }
  ::close(fd);
  return true;
}

void run(const std::vector<std::string>& argv) {
  auto res = run_helper_checked(argv, std::chrono::seconds(60), argv[0]);
  ASSERT_TRUE(res) << describe(res.error());
}

class loop_setup_test : public loop_test::loop_fixture {
protected:
  /// Attaches `image` as `setup` says and checks what the kernel shows of it.
  void expect_attached(const std::string& image, const loop_setup& setup, uint64_t block_size,
                       bool direct_io) {
    auto dev = attach_loop_device(image, setup);
    ASSERT_TRUE(dev) << describe(dev.error());
    auto size = loop_block_size(*dev);
    ASSERT_TRUE(size) << describe(size.error());
    EXPECT_EQ(*size, block_size) << image;
    auto dio = loop_direct_io(*dev);
    ASSERT_TRUE(dio) << describe(dio.error());
    EXPECT_EQ(*dio, direct_io) << image;
    ASSERT_FALSE(detach_loop_device(*dev));
  }
};

TEST_F(loop_setup_test, a_new_image_gets_4096_byte_blocks_and_direct_io_in_one_call) {
  auto image = make_image(dir_, "new.img", 64 << 20);
  EXPECT_EQ(loop_block_size_for(image), 4096u) << "nothing written yet";
  loop_stats stats;
  loop_setup setup;
  setup.stats = &stats;
  expect_attached(image, setup, 4096, can_direct_io(image));
  EXPECT_EQ(stats.configured.value(), 1u) << "this kernel has LOOP_CONFIGURE (Linux 5.8+)";
  EXPECT_EQ(stats.set_fd.value(), 0u);
  EXPECT_EQ(stats.direct_io_unavailable.value(), can_direct_io(image) ? 0u : 1u);
}

TEST_F(loop_setup_test, step_by_step_sets_the_same_as_loop_configure) {
  auto image = make_image(dir_, "old-kernel.img", 64 << 20);
  loop_stats stats;
  loop_setup setup;
  setup.stats = &stats;
  setup.step_by_step = true;
  expect_attached(image, setup, 4096, can_direct_io(image));
  EXPECT_EQ(stats.set_fd.value(), 1u);
  EXPECT_EQ(stats.configured.value(), 0u);
}

TEST_F(loop_setup_test, direct_io_false_reads_and_writes_through_the_page_cache) {
  auto image = make_image(dir_, "buffered.img", 64 << 20);
  loop_stats stats;
  loop_setup setup;
  setup.direct_io = false;
  setup.stats = &stats;
  expect_attached(image, setup, 4096, false);
  EXPECT_EQ(stats.direct_io_unavailable.value(), 0u) << "nothing asked for was refused";
}

TEST_F(loop_setup_test, a_formatted_image_keeps_the_block_size_its_filesystem_was_made_for) {
  // Made on the file itself, as on a loop device of 512-byte blocks (every image before):
  // xfs with 512-byte sectors, ext4 of 1024-byte blocks (mke2fs's choice below 512 MiB).
  auto xfs = make_image(dir_, "xfs.img", 320 << 20);
  run({"mkfs.xfs", "-q", "--", xfs});
  EXPECT_EQ(loop_block_size_for(xfs), 512u);
  expect_attached(xfs, {}, 512, can_direct_io(xfs));
  auto small = make_image(dir_, "ext4-1k.img", 64 << 20);
  run({"mkfs.ext4", "-q", "-F", "--", small});
  EXPECT_EQ(loop_block_size_for(small), 1024u);
  auto big = make_image(dir_, "ext4-4k.img", 64 << 20);
  run({"mkfs.ext4", "-q", "-F", "-b", "4096", "--", big});
  EXPECT_EQ(loop_block_size_for(big), 4096u);
  // A filesystem made on a device of 4096-byte blocks takes that size.
  auto made = make_image(dir_, "made.img", 320 << 20);
  auto dev = attach_loop_device(made);
  ASSERT_TRUE(dev) << describe(dev.error());
  run({"mkfs.xfs", "-q", "--", *dev});
  ASSERT_FALSE(detach_loop_device(*dev));
  EXPECT_EQ(loop_block_size_for(made), 4096u);
}

TEST_F(loop_setup_test, data_berth_cannot_read_keeps_the_kernels_512) {
  // A raw block volume's own data: whatever it holds was written on 512-byte blocks.
  auto image = make_image(dir_, "raw.img", 64 << 20);
  int fd = ::open(image.c_str(), O_WRONLY | O_CLOEXEC);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(::pwrite(fd, "raw block data", 14, 1 << 20), 14);
  ::close(fd);
  EXPECT_EQ(loop_block_size_for(image), 512u);
  EXPECT_EQ(loop_block_size_for(dir_ + "/missing.img"), 512u);
}

} // namespace
} // namespace berth
