// The block backend's expansion with root: online growth, the ext4 offline fallback.
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

class block_backend_grow_test : public block_backend_test,
                                public ::testing::WithParamInterface<const char*> {};

TEST_P(block_backend_grow_test, expand_and_grow_while_published) {
  const std::string fs_type = GetParam();
  const uint64_t start = fs_type == "xfs" ? 300 * mib : 64 * mib;
  auto rec = make_record("g1", start, fs_type);
  create_and_stage(rec);
  const std::string pub = target("g1");
  ASSERT_FALSE(publish(rec, pub, {false, false, {}}));
  std::ofstream(pub + "/before.txt") << "still here";
  const uint64_t before = fs_total(pub);

  auto shrink = backend_->expand(rec, start - mib);
  ASSERT_TRUE(shrink);
  EXPECT_EQ(code_of(shrink), ec::out_of_range);

  ASSERT_FALSE(backend_->expand(rec, 2 * start));
  ASSERT_FALSE(backend_->expand(rec, 2 * start)) << "idempotent";
  EXPECT_EQ(*block_device_size(rec.device), 2 * start) << "the attached device grew too";
  EXPECT_EQ(fs_total(pub), before) << "the filesystem grows only at NodeExpand";

  auto grown = backend_->grow_filesystem(rec);
  ASSERT_TRUE(grown) << describe(grown.error());
  EXPECT_GT(*grown, before + start / 2);
  EXPECT_EQ(fs_total(pub), *grown) << "seen through the published bind";
  auto again = backend_->grow_filesystem(rec);
  ASSERT_TRUE(again) << describe(again.error());
  EXPECT_EQ(*again, *grown) << "idempotent";
  EXPECT_EQ(read_text(pub + "/before.txt"), "still here");
  EXPECT_TRUE(is_mount_point(pub));
}

INSTANTIATE_TEST_SUITE_P(block, block_backend_grow_test, ::testing::Values("xfs", "ext4"));

/// True when this process may resize ext4 online (CAP_SYS_RESOURCE, bit 24).
bool can_resize_ext4_online() {
  std::ifstream in("/proc/self/status");
  std::string line;
  while (std::getline(in, line)) {
    if (line.compare(0, 7, "CapEff:") == 0) {
      return (std::stoull(line.substr(7), nullptr, 16) >> 24) & 1;
    }
  }
  return false;
}

TEST_F(block_backend_test, ext4_offline_fallback_puts_everything_back_when_busy) {
  if (can_resize_ext4_online()) {
    std::cerr << "\n***** SKIPPED: ext4 online resize works here (CAP_SYS_RESOURCE); "
                 "the offline fallback is not reached *****\n\n";
    GTEST_SKIP() << "SKIPPED: the kernel resizes ext4 online here";
  }
  auto rec = make_record("busy", 64 * mib, "ext4");
  create_and_stage(rec, {"nosuid"});
  const std::string pub = target("busy");
  ASSERT_FALSE(publish(rec, pub, {true, false, {"noexec"}}));
  ASSERT_FALSE(backend_->expand(rec, 128 * mib));
  const uint64_t before = fs_total(pub);
  {
    int fd = ::open((rec.staging_path + "/open.txt").c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
    ASSERT_GE(fd, 0);
    auto busy = backend_->grow_filesystem(rec);
    ::close(fd);
    ASSERT_FALSE(busy);
    EXPECT_EQ(code_of(busy.error()), ec::in_use) << describe(busy.error());
    EXPECT_TRUE(is_mount_point(rec.staging_path));
    EXPECT_TRUE(is_mount_point(pub)) << "the published bind was put back";
    EXPECT_EQ(fs_total(pub), before);
  }
  auto grown = backend_->grow_filesystem(rec);
  ASSERT_TRUE(grown) << describe(grown.error());
  EXPECT_GT(*grown, before);
  struct statvfs vfs {};
  ASSERT_EQ(::statvfs(pub.c_str(), &vfs), 0);
  EXPECT_TRUE(vfs.f_flag & ST_RDONLY) << "re-bound with its flags";
  EXPECT_TRUE(vfs.f_flag & ST_NOEXEC);
  EXPECT_TRUE(vfs.f_flag & ST_NOSUID);
  ASSERT_EQ(::statvfs(rec.staging_path.c_str(), &vfs), 0);
  EXPECT_FALSE(vfs.f_flag & ST_RDONLY);
  EXPECT_TRUE(vfs.f_flag & ST_NOSUID) << "the stage flags are used again";
  EXPECT_TRUE(fs::exists(pub + "/open.txt"));
}

} // namespace
} // namespace berth
