// The block backend's expansion with root: online growth, the ext4 offline fallback.
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <functional>
#include <thread>

#include <fcntl.h>
#include <gtest/gtest.h>
#include <linux/capability.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
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

/// Drops CAP_SYS_RESOURCE from this process for good: from the bounding set, so
/// that the helpers it execs as root (resize2fs) cannot regain it, and from the
/// ambient, effective, permitted and inheritable sets. Returns "" or what failed.
std::string drop_cap_sys_resource() {
  if (::prctl(PR_CAPBSET_DROP, CAP_SYS_RESOURCE, 0, 0, 0) != 0) {
    return std::string("prctl(PR_CAPBSET_DROP): ") + std::strerror(errno);
  }
  ::prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0);
  __user_cap_header_struct header{_LINUX_CAPABILITY_VERSION_3, 0};
  __user_cap_data_struct data[_LINUX_CAPABILITY_U32S_3] = {};
  if (::syscall(SYS_capget, &header, data) != 0) {
    return std::string("capget: ") + std::strerror(errno);
  }
  const uint32_t bit = uint32_t{1} << (CAP_SYS_RESOURCE % 32);
  auto& word = data[CAP_SYS_RESOURCE / 32];
  word.effective &= ~bit;
  word.permitted &= ~bit;
  word.inheritable &= ~bit;
  if (::syscall(SYS_capset, &header, data) != 0) {
    return std::string("capset: ") + std::strerror(errno);
  }
  return can_resize_ext4_online() ? "CAP_SYS_RESOURCE is still effective" : "";
}

/// Runs `body` in a forked child that lacks CAP_SYS_RESOURCE, so the kernel
/// refuses ext4's online resize there as it does for an unprivileged driver. The
/// child reports its failures as they happen, and any of them fails this test.
/// Mounts and loop devices it makes are in this process's mount namespace, so the
/// fixture's TearDown cleans them.
void run_without_cap_sys_resource(const std::function<void()>& body) {
  std::fflush(nullptr);
  pid_t pid = ::fork();
  ASSERT_GE(pid, 0) << "fork: " << std::strerror(errno);
  if (pid == 0) {
    auto why = drop_cap_sys_resource();
    if (why.empty()) {
      body();
    } else {
      ADD_FAILURE() << "cannot drop CAP_SYS_RESOURCE: " << why;
    }
    std::fflush(nullptr);
    ::_exit(::testing::Test::HasFailure() ? 1 : 0);
  }
  int status = 0;
  ASSERT_EQ(::waitpid(pid, &status, 0), pid) << std::strerror(errno);
  ASSERT_TRUE(WIFEXITED(status)) << "the child died of signal " << WTERMSIG(status);
  EXPECT_EQ(WEXITSTATUS(status), 0) << "the child without CAP_SYS_RESOURCE failed (see above)";
}

// Runs as root too: the scenario runs in a child without CAP_SYS_RESOURCE, so the
// online resize2fs really fails and the offline fallback really runs.
TEST_F(block_backend_test, ext4_offline_fallback_puts_everything_back_when_busy) {
  run_without_cap_sys_resource([this] {
    ASSERT_FALSE(can_resize_ext4_online());
    auto rec = make_record("busy", 64 * mib, "ext4");
    create_and_stage(rec, {"nosuid"});
    const std::string pub = target("busy");
    ASSERT_FALSE(publish(rec, pub, {true, false, {"noexec"}}));
    ASSERT_FALSE(backend_->expand(rec, 128 * mib));
    const uint64_t before = fs_total(pub);
    {
      int fd =
        ::open((rec.staging_path + "/open.txt").c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
      ASSERT_GE(fd, 0);
      auto busy = backend_->grow_filesystem(rec);
      ::close(fd);
      // Online, an open file is no obstacle: only the offline path is refused here.
      ASSERT_FALSE(busy) << "grew although online resize is refused and a file is open";
      EXPECT_EQ(code_of(busy.error()), ec::in_use) << describe(busy.error());
      EXPECT_TRUE(is_mount_point(rec.staging_path));
      EXPECT_TRUE(is_mount_point(pub)) << "the published bind was put back";
      EXPECT_EQ(fs_total(pub), before);
    }
    auto grown = backend_->grow_filesystem(rec);
    ASSERT_TRUE(grown) << describe(grown.error());
    EXPECT_GT(*grown, before);
    EXPECT_EQ(fs_total(pub), *grown) << "seen through the re-bound target";
    struct statvfs vfs {};
    ASSERT_EQ(::statvfs(pub.c_str(), &vfs), 0);
    EXPECT_TRUE(vfs.f_flag & ST_RDONLY) << "re-bound with its flags";
    EXPECT_TRUE(vfs.f_flag & ST_NOEXEC);
    EXPECT_TRUE(vfs.f_flag & ST_NOSUID);
    ASSERT_EQ(::statvfs(rec.staging_path.c_str(), &vfs), 0);
    EXPECT_FALSE(vfs.f_flag & ST_RDONLY);
    EXPECT_TRUE(vfs.f_flag & ST_NOSUID) << "the stage flags are used again";
    EXPECT_TRUE(fs::exists(pub + "/open.txt"));
  });
}

} // namespace
} // namespace berth
