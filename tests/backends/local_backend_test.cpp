// The local backend's plain directory volumes: names that could leave the state root,
// create, mount, unmount (busy and lazy), remove and what it refuses, imported
// mountpoints. Typed volumes (tmpfs, bind, ext4 on a loop device, NFS) and the
// measurement are in local_typed_test.cpp.

#include "backends/local_backend.hpp"

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include "backends/helper_process.hpp"
#include "backends/mountinfo.hpp"
#include "core/errors.hpp"
#include "tests/backends/local_backend_fixture.hpp"

namespace fs = std::filesystem;
using namespace std::chrono_literals;

namespace berth {
namespace {

using namespace test; // the fixture and its helpers (local_backend_fixture.hpp)

// -- names --------------------------------------------------------------------

TEST(local_backend_names, refuses_names_that_could_leave_the_state_root) {
  test::temp_state state;
  local_backend b(state.path());
  EXPECT_EQ(b.name(), "local");
  for (const std::string& bad : std::vector<std::string>{"", "..", "../etc", "a/b", ".hidden", "-x",
                                                      std::string(129, 'a')}) {
    auto rec = make_record(bad);
    auto err = b.validate(bad, {});
    ASSERT_TRUE(err) << bad;
    EXPECT_EQ(code_of(err), ec::invalid_argument);
    EXPECT_NE(describe(err).find("\"" + bad + "\""), std::string::npos) << describe(err);
    EXPECT_TRUE(b.create(rec));
    EXPECT_FALSE(b.mount(rec));
    EXPECT_TRUE(b.unmount(rec, false));
    EXPECT_TRUE(b.remove(rec));
    EXPECT_EQ(b.mountpoint(rec), "");
  }
  EXPECT_FALSE(fs::exists(state.path() + "/volumes"));
  EXPECT_FALSE(b.validate("ok.name-1_x", {}));
  EXPECT_TRUE(b.validate("ok", {{"bogus", "1"}}));
}

// -- a plain directory volume -------------------------------------------------

TEST_F(local_backend_test, plain_volume_lifecycle) {
  auto rec = make_record("v1");
  const std::string dir = state_.path() + "/volumes/v1";
  ASSERT_FALSE(backend_->create(rec));
  ASSERT_FALSE(backend_->create(rec)) << "create is idempotent";
  EXPECT_TRUE(fs::is_directory(dir + "/data"));
  EXPECT_TRUE(fs::is_directory(dir + "/mnt"));
  EXPECT_EQ(fs::status(dir + "/mnt").permissions(), fs::perms(0755));
  EXPECT_EQ(backend_->mountpoint(rec), dir + "/mnt");

  auto mnt = backend_->mount(rec);
  ASSERT_TRUE(mnt) << describe(mnt.error());
  EXPECT_EQ(*mnt, dir + "/mnt");
  EXPECT_EQ(mounts_at(*mnt), 1u);
  EXPECT_TRUE(is_mount_point(*mnt));
  std::ofstream(*mnt + "/hello.txt") << "through the mount";
  EXPECT_EQ(read_text(dir + "/data/hello.txt"), "through the mount");

  auto again = backend_->mount(rec);
  ASSERT_TRUE(again) << describe(again.error());
  EXPECT_EQ(*again, *mnt);
  EXPECT_EQ(mounts_at(*mnt), 1u) << "mounting twice must not stack mounts";

  EXPECT_FALSE(backend_->unmount(rec, false));
  EXPECT_EQ(mounts_at(*mnt), 0u);
  EXPECT_FALSE(fs::exists(*mnt + "/hello.txt"));
  EXPECT_FALSE(backend_->unmount(rec, false)) << "unmounting twice is success";

  EXPECT_FALSE(backend_->remove(rec));
  EXPECT_FALSE(fs::exists(dir));
  EXPECT_FALSE(backend_->remove(rec)) << "remove is idempotent";
}

TEST_F(local_backend_test, uid_gid_and_mode_set_the_root_a_container_sees) {
  auto rec = make_record("owned", {{"uid", "1000"}, {"gid", "1001"}, {"mode", "0750"}});
  ASSERT_FALSE(backend_->validate(rec.name, rec.options));
  ASSERT_FALSE(backend_->create(rec));
  auto mnt = backend_->mount(rec);
  ASSERT_TRUE(mnt) << describe(mnt.error());
  struct stat st {};
  ASSERT_EQ(::stat(mnt->c_str(), &st), 0);
  EXPECT_EQ(st.st_uid, 1000u);
  EXPECT_EQ(st.st_gid, 1001u);
  EXPECT_EQ(st.st_mode & 07777, 0750u);
  EXPECT_FALSE(backend_->unmount(rec, false));

  // What a container does to its root later is its own: a mount does not set it back.
  const std::string data = state_.path() + "/volumes/owned/data";
  ASSERT_EQ(::chmod(data.c_str(), 0700), 0);
  ASSERT_EQ(::rmdir((state_.path() + "/volumes/owned/mnt").c_str()), 0);
  mnt = backend_->mount(rec);
  ASSERT_TRUE(mnt) << describe(mnt.error());
  ASSERT_EQ(::stat(mnt->c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0700u);
  EXPECT_FALSE(backend_->unmount(rec, false));
  EXPECT_FALSE(backend_->remove(rec));
}

TEST_F(local_backend_test, only_a_uid_leaves_the_group_as_it_is) {
  auto rec = make_record("uid-only", {{"uid", "1234"}});
  ASSERT_FALSE(backend_->create(rec));
  struct stat st {};
  ASSERT_EQ(::stat((state_.path() + "/volumes/uid-only/data").c_str(), &st), 0);
  EXPECT_EQ(st.st_uid, 1234u);
  EXPECT_EQ(st.st_gid, ::getegid());
  EXPECT_EQ(st.st_mode & 07777, 0755u);
  EXPECT_FALSE(backend_->remove(rec));
}

TEST_F(local_backend_test, mount_without_create_makes_the_dirs) {
  auto rec = make_record("late");
  auto mnt = backend_->mount(rec);
  ASSERT_TRUE(mnt) << describe(mnt.error());
  EXPECT_EQ(mounts_at(*mnt), 1u);
  EXPECT_FALSE(backend_->unmount(rec, false));
}

TEST_F(local_backend_test, busy_unmount_fails_and_lazy_unmount_detaches) {
  auto rec = make_record("busy");
  ASSERT_FALSE(backend_->create(rec));
  auto mnt = backend_->mount(rec);
  ASSERT_TRUE(mnt);
  int fd = ::open((*mnt + "/open.txt").c_str(), O_CREAT | O_WRONLY | O_CLOEXEC, 0644);
  ASSERT_GE(fd, 0);
  auto err = backend_->unmount(rec, false);
  ASSERT_TRUE(err);
  EXPECT_EQ(code_of(err), ec::in_use) << describe(err);
  EXPECT_NE(describe(err).find("busy"), std::string::npos) << describe(err);
  EXPECT_FALSE(backend_->unmount(rec, true));
  EXPECT_EQ(mounts_at(*mnt), 0u);
  EXPECT_EQ(::write(fd, "x", 1), 1) << "a detached mount stays usable for open files";
  ::close(fd);
  EXPECT_FALSE(backend_->unmount(rec, true)) << "lazy unmount of nothing is success";
}

TEST_F(local_backend_test, remove_is_refused_while_mounted) {
  auto rec = make_record("live");
  ASSERT_FALSE(backend_->create(rec));
  auto mnt = backend_->mount(rec);
  ASSERT_TRUE(mnt);
  std::ofstream(*mnt + "/keep.txt") << "keep";
  auto err = backend_->remove(rec);
  ASSERT_TRUE(err);
  EXPECT_EQ(code_of(err), ec::in_use);
  EXPECT_NE(describe(err).find("live"), std::string::npos) << describe(err);
  EXPECT_EQ(read_text(state_.path() + "/volumes/live/data/keep.txt"), "keep");
  EXPECT_FALSE(backend_->unmount(rec, false));
  EXPECT_FALSE(backend_->remove(rec));
}

TEST_F(local_backend_test, remove_is_refused_with_a_mount_nested_in_data) {
  auto rec = make_record("nested");
  ASSERT_FALSE(backend_->create(rec));
  std::string sub = state_.path() + "/volumes/nested/data/sub";
  fs::create_directories(sub);
  ASSERT_EQ(::mount("tmpfs", sub.c_str(), "tmpfs", 0, "size=1m"), 0);
  std::ofstream(sub + "/precious") << "x";
  auto err = backend_->remove(rec);
  ASSERT_TRUE(err);
  EXPECT_EQ(code_of(err), ec::in_use);
  EXPECT_NE(describe(err).find(sub), std::string::npos) << describe(err);
  EXPECT_TRUE(fs::exists(sub + "/precious"));
}

TEST_F(local_backend_test, remove_does_not_follow_symlinks_out_of_the_volume) {
  auto rec = make_record("links");
  ASSERT_FALSE(backend_->create(rec));
  std::string outside = state_.path() + "/outside";
  fs::create_directories(outside);
  std::ofstream(outside + "/victim") << "must survive";
  std::string data = state_.path() + "/volumes/links/data";
  fs::create_directory_symlink(outside, data + "/dirlink");
  fs::create_symlink(outside + "/victim", data + "/filelink");
  ASSERT_FALSE(backend_->remove(rec));
  EXPECT_FALSE(fs::exists(state_.path() + "/volumes/links"));
  EXPECT_EQ(read_text(outside + "/victim"), "must survive");
}

TEST_F(local_backend_test, imported_volume_keeps_its_mountpoint) {
  auto rec = make_record("ecs1");
  rec.mountpoint = state_.path() + "/ecs/volumes/ecs1";
  ASSERT_FALSE(backend_->create(rec));
  EXPECT_EQ(backend_->mountpoint(rec), rec.mountpoint);
  auto mnt = backend_->mount(rec);
  ASSERT_TRUE(mnt) << describe(mnt.error());
  EXPECT_EQ(*mnt, rec.mountpoint);
  EXPECT_EQ(mounts_at(rec.mountpoint), 1u);
  EXPECT_TRUE(backend_->remove(rec)) << "still mounted at its own path";
  EXPECT_FALSE(backend_->unmount(rec, false));
  EXPECT_EQ(mounts_at(rec.mountpoint), 0u);
  EXPECT_FALSE(backend_->remove(rec));
}

} // namespace
} // namespace berth
