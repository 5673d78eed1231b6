// The local backend's typed volumes: tmpfs with a size, a bind of a host directory and
// the sources it refuses, a block device, Docker's mode on the volumes root, ext4 on a
// loop device, an NFS helper that fails; and the time of a plain mount/unmount pair.

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

// -- typed volumes ------------------------------------------------------------

TEST_F(local_backend_test, tmpfs_with_size) {
  auto rec = make_record("t1", {{"type", "tmpfs"}, {"size", "2m"}, {"o", "mode=700,nosuid"}});
  ASSERT_FALSE(backend_->validate(rec.name, rec.options));
  ASSERT_FALSE(backend_->create(rec));
  auto mnt = backend_->mount(rec);
  ASSERT_TRUE(mnt) << describe(mnt.error());
  auto entries = read_mountinfo();
  ASSERT_TRUE(entries);
  auto e = find_mount(*entries, *mnt);
  ASSERT_NE(e, nullptr);
  EXPECT_EQ(e->fstype, "tmpfs");
  EXPECT_NE(e->super_options.find("size=2048k"), std::string::npos) << e->super_options;
  EXPECT_NE(e->super_options.find("mode=700"), std::string::npos) << e->super_options;
  EXPECT_NE(e->options.find("nosuid"), std::string::npos) << e->options;
  EXPECT_FALSE(fs::exists(state_.path() + "/volumes/t1/data/x"));
  EXPECT_FALSE(backend_->unmount(rec, false));
  EXPECT_FALSE(backend_->remove(rec));
}

TEST_F(local_backend_test, bind_of_a_host_directory) {
  test::temp_state outside; // a bind source may not lie in the state directory
  std::string host = outside.path() + "/host-dir";
  fs::create_directories(host);
  auto rec = make_record("b1", {{"type", "bind"}, {"device", host}});
  ASSERT_FALSE(backend_->create(rec));
  auto mnt = backend_->mount(rec);
  ASSERT_TRUE(mnt) << describe(mnt.error());
  std::ofstream(*mnt + "/f") << "bound";
  EXPECT_EQ(read_text(host + "/f"), "bound");
  EXPECT_FALSE(backend_->unmount(rec, false));

  auto ro = make_record("b2", {{"type", "none"}, {"device", host}, {"o", "bind,ro"}});
  auto rmnt = backend_->mount(ro);
  ASSERT_TRUE(rmnt) << describe(rmnt.error());
  EXPECT_EQ(read_text(*rmnt + "/f"), "bound");
  EXPECT_LT(::open((*rmnt + "/g").c_str(), O_CREAT | O_WRONLY | O_CLOEXEC, 0644), 0);
  EXPECT_EQ(errno, EROFS);
  EXPECT_FALSE(backend_->unmount(ro, false));

  auto missing = make_record("b3", {{"type", "bind"}, {"device", host + "/nope"}});
  auto err = backend_->mount(missing);
  ASSERT_FALSE(err);
  auto msg = describe(err.error());
  EXPECT_NE(msg.find("b3"), std::string::npos) << msg;
  EXPECT_NE(msg.find(host + "/nope"), std::string::npos) << msg;
  EXPECT_NE(msg.find("No such file"), std::string::npos) << msg;
}

TEST_F(local_backend_test, bind_source_in_around_or_linked_to_the_state_dir_is_refused) {
  // A bind of the state directory (or of a directory above or below it) would put
  // the journal and other volumes' data inside a container.
  test::temp_state outside;
  fs::create_directories(state_.path() + "/volumes/other/data");
  std::string link = outside.path() + "/link-to-state";
  fs::create_symlink(state_.path() + "/volumes", link);
  std::string parent = fs::path(state_.path()).parent_path().string();
  int n = 0;
  for (const auto& source : {state_.path(), state_.path() + "/volumes/other/data", parent,
                             std::string{"/"}, link, link + "/other"}) {
    SCOPED_TRACE(source);
    std::string name = "bs" + std::to_string(n++);
    for (const char* type : {"bind", "none"}) {
      option_map opts = {{"type", type}, {"device", source}, {"o", "bind"}};
      auto err = backend_->validate(name, opts);
      ASSERT_TRUE(err);
      EXPECT_EQ(code_of(err), ec::invalid_argument);
      EXPECT_NE(describe(err).find("state directory"), std::string::npos) << describe(err);
      auto rec = make_record(name, opts);
      auto mnt = backend_->mount(rec); // a record made before the check: mount refuses too
      ASSERT_FALSE(mnt);
      EXPECT_NE(describe(mnt.error()).find("state directory"), std::string::npos);
      EXPECT_EQ(mounts_at(backend_->mountpoint(rec)), 0u);
      EXPECT_FALSE(fs::exists(backend_->volume_dir(name))) << "nothing is made for it";
    }
  }
  // A sibling whose name merely starts like the state directory is fine.
  test::temp_state sibling;
  EXPECT_FALSE(backend_->validate("ok", {{"type", "bind"}, {"device", sibling.path()}}));
}

TEST_F(local_backend_test, block_device_option_must_name_a_block_device) {
  auto err = backend_->validate("blk", {{"type", "ext4"}, {"device", "/dev/null"}});
  ASSERT_TRUE(err);
  EXPECT_NE(describe(err).find("not a block device"), std::string::npos) << describe(err);
}

TEST_F(local_backend_test, volumes_root_gets_dockers_mode_0701) {
  ASSERT_FALSE(backend_->create(make_record("m1")));
  struct stat st {};
  ASSERT_EQ(::stat((state_.path() + "/volumes").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0701u);
}

/// True when `program` is on PATH.
bool on_path(const std::string& program) {
  auto res = run_helper({"sh", "-c", "command -v " + program}, 5s);
  return res && res->exit_code == 0;
}

// What the test needs is checked up front and skips loudly when absent. Once the
// tools are there, a failing mkfs or losetup is a failure, not a skip.
TEST_F(local_backend_test, ext4_on_a_loop_device) {
  std::string missing;
  for (const char* tool : {"losetup", "mkfs.ext4"}) {
    if (!on_path(tool)) {
      missing = std::string(tool) + " is not installed";
      break;
    }
  }
  if (missing.empty() && ::access("/dev/loop-control", R_OK | W_OK) != 0) {
    missing = "no loop devices here (/dev/loop-control)";
  }
  if (!missing.empty()) {
    std::cerr << "\n***** SKIPPED: ext4 on a loop device untested: " << missing << " *****\n\n";
    GTEST_SKIP() << "SKIPPED LOUDLY: " << missing << "; ext4 on a loop device untested";
  }
  std::string image = state_.path() + "/disk.img";
  {
    std::ofstream f(image);
  }
  fs::resize_file(image, 32 << 20);
  auto mkfs = run_helper_checked({"mkfs.ext4", "-q", "-F", image}, 30s, "mkfs.ext4");
  ASSERT_TRUE(mkfs) << "mkfs.ext4 is installed but failed: " << describe(mkfs.error());
  auto loop = run_helper_checked({"losetup", "-f", "--show", image}, 30s, "losetup");
  ASSERT_TRUE(loop) << "losetup is installed and /dev/loop-control exists, but it failed: "
                    << describe(loop.error());
  std::string dev = *loop;
  while (!dev.empty() && dev.back() == '\n') {
    dev.pop_back();
  }
  auto rec = make_record("e1", {{"type", "ext4"}, {"device", dev}, {"o", "noatime,data=ordered"}});
  ASSERT_FALSE(backend_->validate(rec.name, rec.options));
  ASSERT_FALSE(backend_->create(rec));
  auto mnt = backend_->mount(rec);
  if (mnt) {
    auto entries = read_mountinfo();
    ASSERT_TRUE(entries);
    auto e = find_mount(*entries, *mnt);
    ASSERT_NE(e, nullptr);
    EXPECT_EQ(e->fstype, "ext4");
    EXPECT_EQ(e->source, dev);
    EXPECT_NE(e->options.find("noatime"), std::string::npos) << e->options;
    EXPECT_TRUE(fs::exists(*mnt + "/lost+found"));
    EXPECT_FALSE(backend_->unmount(rec, false));
  }
  run_helper({"losetup", "-d", dev}, 10s);
  ASSERT_TRUE(mnt) << describe(mnt.error());
}

TEST_F(local_backend_test, nfs_helper_failure_names_volume_and_device) {
  backend_ = std::make_unique<local_backend>(state_.path(), 3s);
  // Nothing serves NFS on port 1; the helper fails or is killed at the timeout.
  auto rec = make_record("n1", {{"type", "nfs4"},
                                {"device", "127.0.0.1:/export"},
                                {"o", "port=1,proto=tcp,soft,timeo=5,retrans=0,netns=/proc/self/ns/net"}});
  ASSERT_FALSE(backend_->create(rec));
  auto start = std::chrono::steady_clock::now();
  auto mnt = backend_->mount(rec);
  auto took = std::chrono::steady_clock::now() - start;
  ASSERT_FALSE(mnt);
  auto code = code_of(mnt.error());
  EXPECT_TRUE(code == ec::backend_failure || code == ec::timeout) << describe(mnt.error());
  auto msg = describe(mnt.error());
  EXPECT_NE(msg.find("n1"), std::string::npos) << msg;
  EXPECT_NE(msg.find("127.0.0.1:/export"), std::string::npos) << msg;
  EXPECT_LT(took, 6s);
  std::cout << "[ info ] nfs failure after "
            << std::chrono::duration_cast<std::chrono::milliseconds>(took).count()
            << " ms: " << msg << "\n";
}

// -- measurement --------------------------------------------------------------

TEST_F(local_backend_test, measure_plain_mount_unmount_pair) {
  auto rec = make_record("bench");
  ASSERT_FALSE(backend_->create(rec));
  constexpr int pairs = 1000;
  auto start = std::chrono::steady_clock::now();
  auto cpu_start = test::thread_cpu_us();
  for (int i = 0; i < pairs; ++i) {
    auto mnt = backend_->mount(rec);
    ASSERT_TRUE(mnt) << describe(mnt.error());
    ASSERT_FALSE(backend_->unmount(rec, false));
  }
  auto us = std::chrono::duration_cast<std::chrono::microseconds>(
              std::chrono::steady_clock::now() - start).count();
  std::cout << "[ perf ] plain mount()+unmount() pair: " << static_cast<double>(us) / pairs
            << " us per pair wall, "
            << static_cast<double>(test::thread_cpu_us() - cpu_start) / pairs
            << " us CPU (" << pairs << " pairs)\n";
}

} // namespace
} // namespace berth
