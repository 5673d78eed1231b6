// What a block volume's workload meets on the data path, read back from the kernel: the
// loop device's direct I/O, block size and scheduler, and the mount's online discard, which
// hands the space a workload deletes back to the host. Root and loop devices, or the
// fixture skips loudly.

#include <fstream>
#include <vector>

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include "backends/block_backend.hpp"
#include "backends/detail/fs_freeze.hpp"
#include "backends/loop_device.hpp"
#include "backends/mountinfo.hpp"
#include "tests/backends/block_fixture.hpp"

namespace berth {
namespace {

using namespace block_test;

/// /sys/block/loopN/queue/<name> of `device`, without its newline.
std::string queue_setting(const std::string& device, const std::string& name) {
  auto text = read_text("/sys/block/" + device.substr(device.rfind('/') + 1) + "/queue/" + name);
  while (!text.empty() && text.back() == '\n') {
    text.pop_back();
  }
  return text;
}

/// The superblock options of the mount at `path`.
std::string super_options_at(const std::string& path) {
  auto mounts = read_mountinfo();
  EXPECT_TRUE(mounts);
  if (!mounts) {
    return {};
  }
  auto here = mounts_at(*mounts, path);
  return here.empty() ? std::string{} : here.back()->super_options;
}

bool has_option(const std::string& options, const std::string& option) {
  return ("," + options + ",").find("," + option + ",") != std::string::npos;
}

uint64_t allocated_bytes(const std::string& image) {
  struct stat st {};
  EXPECT_EQ(::stat(image.c_str(), &st), 0) << image;
  return static_cast<uint64_t>(st.st_blocks) * 512;
}

/// Writes `bytes` of data no filesystem compresses into `path`, fsync'd.
void write_file(const std::string& path, size_t bytes) {
  std::vector<char> chunk(1 << 20);
  for (size_t i = 0; i < chunk.size(); ++i) {
    chunk[i] = static_cast<char>((i * 2654435761u) >> 13);
  }
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  ASSERT_GE(fd, 0) << path;
  for (size_t done = 0; done < bytes; done += chunk.size()) {
    chunk[0] = static_cast<char>(done >> 20); // no two chunks alike
    ASSERT_EQ(::write(fd, chunk.data(), chunk.size()), static_cast<ssize_t>(chunk.size()));
  }
  ASSERT_EQ(::fsync(fd), 0);
  ::close(fd);
}

/// Freezes and thaws the filesystem at `dir`: its journal is committed and, once frozen,
/// no discard of what it freed is still under way (xfs issues them after its log commits,
/// in the background, and its freeze waits for every busy extent).
void settle(const std::string& dir) {
  auto frozen = filesystem_freeze::freeze(dir, "test");
  ASSERT_TRUE(frozen) << describe(frozen.error());
  frozen->thaw();
}

class block_data_path_test : public block_backend_test,
                             public ::testing::WithParamInterface<std::string> {};

TEST_P(block_data_path_test, a_staged_volume_has_direct_io_4k_blocks_and_online_discard) {
  auto rec = make_record("d1", 320 * mib, GetParam());
  create_and_stage(rec);
  ASSERT_TRUE(is_loop_device_path(rec.device));
  EXPECT_TRUE(*loop_direct_io(rec.device)) << "cached once, in the volume's filesystem";
  EXPECT_EQ(*loop_block_size(rec.device), 4096u) << "a new image";
  const auto scheduler = queue_setting(rec.device, "scheduler");
  EXPECT_NE(scheduler.find("[none]"), std::string::npos)
    << scheduler << ": the loop device queues nothing of its own; the disk's scheduler orders";
  EXPECT_TRUE(has_option(super_options_at(rec.staging_path), "discard"))
    << super_options_at(rec.staging_path);

  // Attached again (an unstage, a reboot): the filesystem made on 4096-byte blocks keeps them.
  ASSERT_FALSE(backend_->unstage(rec));
  ASSERT_TRUE(wait_detached(backend_->image_path(rec)));
  auto dev = backend_->stage(rec, {rec.staging_path, false, "", {}});
  ASSERT_TRUE(dev) << describe(dev.error());
  EXPECT_EQ(*loop_block_size(*dev), 4096u);
  EXPECT_TRUE(*loop_direct_io(*dev));
}

TEST_P(block_data_path_test, space_a_workload_deletes_goes_back_to_the_host) {
  auto rec = make_record("d2", 320 * mib, GetParam());
  create_and_stage(rec);
  const auto image = backend_->image_path(rec);
  const uint64_t empty = allocated_bytes(image);
  write_file(rec.staging_path + "/data", 64 * mib);
  const uint64_t full = allocated_bytes(image);
  ASSERT_GE(full, empty + 64 * mib) << "the image grew by what was written";

  ASSERT_EQ(::unlink((rec.staging_path + "/data").c_str()), 0);
  settle(rec.staging_path);
  const uint64_t back = allocated_bytes(image);
  EXPECT_LE(back, empty + 64 * mib / 10)
    << "at least 90% of the deleted 64 MiB handed back: " << empty << " before, " << full
    << " written, " << back << " after";
}

TEST_P(block_data_path_test, nodiscard_keeps_freed_space_in_the_image) {
  auto rec = make_record("d3", 320 * mib, GetParam());
  create_and_stage(rec, {"nodiscard"});
  auto options = super_options_at(rec.staging_path);
  EXPECT_FALSE(has_option(options, "discard")) << options;
  const auto image = backend_->image_path(rec);
  const uint64_t empty = allocated_bytes(image);
  write_file(rec.staging_path + "/data", 32 * mib);
  ASSERT_EQ(::unlink((rec.staging_path + "/data").c_str()), 0);
  settle(rec.staging_path);
  EXPECT_GE(allocated_bytes(image), empty + 32 * mib * 9 / 10) << "kept until an fstrim";
}

TEST_P(block_data_path_test, a_volume_made_before_stages_with_the_block_size_it_was_made_on) {
  // As every berthd before this one made it: formatted on a buffered loop device of
  // 512-byte blocks.
  auto rec = make_record("d4", 320 * mib, GetParam());
  ASSERT_FALSE(backend_->create(rec));
  const auto image = backend_->image_path(rec);
  loop_setup old;
  old.direct_io = false;
  old.block_size = 512;
  auto made = attach_loop_device(image, old);
  ASSERT_TRUE(made) << describe(made.error());
  auto mkfs = GetParam() == "xfs"
                ? run_helper({"mkfs.xfs", "-q", "-s", "size=512", "--", *made}, 60s)
                : run_helper({"mkfs.ext4", "-q", "-F", "-b", "1024", "--", *made}, 60s);
  ASSERT_TRUE(mkfs && mkfs->exit_code == 0) << "mkfs";
  ASSERT_FALSE(detach_loop_device(*made));
  ASSERT_TRUE(wait_detached(image));

  stage_request req{staging(rec.name), false, "", {}};
  auto dev = backend_->stage(rec, req);
  ASSERT_TRUE(dev) << describe(dev.error());
  rec.staging_path = req.staging_path;
  rec.device = *dev;
  // Its own block size (xfs' 512-byte sectors, ext4's 1024-byte blocks): a filesystem
  // cannot be mounted on blocks larger than its own.
  EXPECT_EQ(*loop_block_size(rec.device), GetParam() == "xfs" ? 512u : 1024u);
  EXPECT_TRUE(*loop_direct_io(rec.device));
  std::ofstream(rec.staging_path + "/after") << "written after the upgrade";
  EXPECT_EQ(read_text(rec.staging_path + "/after"), "written after the upgrade");
}

INSTANTIATE_TEST_SUITE_P(block, block_data_path_test, ::testing::Values("xfs", "ext4"));

} // namespace
} // namespace berth
