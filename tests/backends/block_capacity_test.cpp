// GetCapacity and the journal reserve (docs/design.md, "Durable state"): images on the
// state filesystem must not be promised the room the journal's reserve is meant to hold;
// --block-dir moves them.

#include "backends/block_backend.hpp"

#include <fcntl.h>
#include <filesystem>
#include <sys/mount.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include "core/errors.hpp"
#include "temp_state.hpp"

namespace berth {
namespace {

namespace fs = std::filesystem;

constexpr uint64_t mib = uint64_t{1} << 20;

/// Mounts a tmpfs of `size_mib` at `dir`; false when that is not possible (no root).
bool mount_tmpfs(const std::string& dir, int size_mib) {
  fs::create_directories(dir);
  auto opts = "size=" + std::to_string(size_mib) + "m";
  return ::mount("tmpfs", dir.c_str(), "tmpfs", 0, opts.c_str()) == 0;
}

uint64_t free_bytes(const std::string& dir) {
  struct statvfs vfs {};
  EXPECT_EQ(::statvfs(dir.c_str(), &vfs), 0);
  return static_cast<uint64_t>(vfs.f_bavail) * vfs.f_frsize;
}

void allocate(const std::string& path, uint64_t bytes) {
  int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(::fallocate(fd, 0, 0, static_cast<off_t>(bytes)), 0);
  ::close(fd);
}

TEST(block_capacity, subtracts_the_part_of_the_reserve_not_yet_held) {
  test::temp_state state;
  auto root = state.path() + "/state-fs";
  if (!mount_tmpfs(root, 64)) {
    GTEST_SKIP() << "cannot mount a tmpfs (needs root)";
  }
  fs::create_directories(root + "/state");
  block_space space;
  space.reserve_path = root + "/state/reserve";
  space.reserve_bytes = 16 * mib;
  block_backend b(root, std::chrono::seconds(5), space);
  // No reserve file yet: all of it is still to come out of the free space.
  auto cap = b.available_capacity();
  ASSERT_TRUE(cap) << describe(cap.error());
  EXPECT_EQ(*cap, free_bytes(root) - 16 * mib);
  // Half held: the other half is missing.
  allocate(space.reserve_path, 8 * mib);
  cap = b.available_capacity();
  ASSERT_TRUE(cap);
  EXPECT_EQ(*cap, free_bytes(root) - 8 * mib);
  // Whole: its blocks are already missing from the free space.
  allocate(space.reserve_path, 16 * mib);
  cap = b.available_capacity();
  ASSERT_TRUE(cap);
  EXPECT_EQ(*cap, free_bytes(root));
}

TEST(block_capacity, images_on_another_filesystem_ignore_the_reserve) {
  test::temp_state state;
  auto root = state.path() + "/state-fs";
  auto images = state.path() + "/images";
  if (!mount_tmpfs(root, 64) || !mount_tmpfs(images, 32)) {
    GTEST_SKIP() << "cannot mount a tmpfs (needs root)";
  }
  fs::create_directories(root + "/state");
  block_space space;
  space.block_dir = images;
  space.reserve_path = root + "/state/reserve";
  space.reserve_bytes = 16 * mib;
  block_backend b(root, std::chrono::seconds(5), space);
  auto cap = b.available_capacity();
  ASSERT_TRUE(cap) << describe(cap.error());
  EXPECT_EQ(*cap, free_bytes(images));
  EXPECT_EQ(b.image_path(record_kind::volume, "v1"), images + "/volumes/v1.img");
  EXPECT_EQ(b.image_path(record_kind::snapshot, "s1"), images + "/snapshots/s1.img");
}

TEST(block_capacity, default_block_dir_is_under_the_state_dir) {
  test::temp_state state;
  block_backend b(state.path());
  auto canonical = fs::weakly_canonical(state.path()).string();
  EXPECT_EQ(b.image_path(record_kind::volume, "v1"), canonical + "/block/volumes/v1.img");
  auto cap = b.available_capacity();
  ASSERT_TRUE(cap) << "BLOCK does not exist yet: " << describe(cap.error());
  EXPECT_GT(*cap, 0u);
}

} // namespace
} // namespace berth
