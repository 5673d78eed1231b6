#include "backends/loop_device.hpp"

#include <chrono>
#include <filesystem>
#include <set>
#include <thread>
#include <vector>

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sched.h>
#include <sys/mount.h>
#include <sys/wait.h>
#include <unistd.h>

#include "core/errors.hpp"
#include "loop_fixture.hpp"

namespace fs = std::filesystem;

namespace berth {
namespace {

using loop_test::make_image;

ec code_of(const caf::error& err) {
  return static_cast<ec>(err.code());
}

/// Waits (up to 2 s) until no loop device backs `image`: a detach while another
/// process holds the device open completes at its last close.
bool wait_detached(const std::string& image) {
  for (int i = 0; i < 200; ++i) {
    auto dev = find_loop_device(image);
    if (dev && dev->empty()) {
      return true;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return false;
}

class loop_device_test : public loop_test::loop_fixture {};

TEST(loop_device_paths, only_dev_loop_n_is_a_loop_device) {
  EXPECT_TRUE(is_loop_device_path("/dev/loop0"));
  EXPECT_TRUE(is_loop_device_path("/dev/loop123"));
  for (const std::string bad : {"", "/dev/loop", "/dev/loop-control", "/dev/sda", "/dev/loop1/x",
                                "/dev/loop1 ", "loop1", "/dev/loop12345678"}) {
    EXPECT_FALSE(is_loop_device_path(bad)) << bad;
  }
  auto err = detach_loop_device("/dev/sda");
  ASSERT_TRUE(err);
  EXPECT_EQ(code_of(err), ec::invalid_argument);
  EXPECT_NE(describe(err).find("/dev/sda"), std::string::npos);
  EXPECT_TRUE(refresh_loop_capacity("/etc/passwd"));
}

TEST_F(loop_device_test, attach_find_size_detach) {
  auto image = make_image(dir_, "a.img", 64 << 20);
  make_image(dir_, "a.img2", 32 << 20); // a longer name must never match
  auto none = find_loop_device(image);
  ASSERT_TRUE(none) << describe(none.error());
  EXPECT_EQ(*none, "");

  auto dev = attach_loop_device(image);
  ASSERT_TRUE(dev) << describe(dev.error());
  EXPECT_TRUE(is_loop_device_path(*dev)) << *dev;
  auto found = find_loop_device(image);
  ASSERT_TRUE(found);
  EXPECT_EQ(*found, *dev);
  auto other = find_loop_device(dir_ + "/a.img2");
  ASSERT_TRUE(other);
  EXPECT_EQ(*other, "");
  auto size = block_device_size(*dev);
  ASSERT_TRUE(size) << describe(size.error());
  EXPECT_EQ(*size, uint64_t{64} << 20);

  bool attached = true;
  auto again = find_or_attach_loop_device(image, attached);
  ASSERT_TRUE(again);
  EXPECT_EQ(*again, *dev) << "an attached image is found, not attached twice";
  EXPECT_FALSE(attached);

  bool listed = false;
  for (const auto& [d, backing] : list_loop_devices()) {
    listed = listed || (d == *dev && backing == image);
  }
  EXPECT_TRUE(listed);

  EXPECT_FALSE(detach_loop_device(*dev));
  EXPECT_TRUE(wait_detached(image));
  EXPECT_FALSE(detach_loop_device(*dev)) << "detaching a detached device is success";
}

TEST_F(loop_device_test, a_device_attached_in_a_mount_namespace_now_gone_is_found) {
  // As a berthd in a container that was replaced: the device was attached through a bind
  // mount of a mount namespace that no longer exists, and /sys names its file by another path.
  auto image = make_image(dir_, "ns.img", 16 << 20);
  auto via = dir_ + "/via";
  fs::create_directories(via);
  pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    if (::unshare(CLONE_NEWNS) != 0 || ::mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0
        || ::mount(dir_.c_str(), via.c_str(), nullptr, MS_BIND, nullptr) != 0) {
      ::_exit(2);
    }
    ::_exit(attach_loop_device(via + "/ns.img") ? 0 : 3);
  }
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "the child's attach: " << status;
  auto found = find_loop_device(image);
  ASSERT_TRUE(found) << describe(found.error());
  ASSERT_NE(*found, "") << "the device attached in the namespace that is gone is not found";
  std::string backing;
  for (const auto& [device, file] : list_loop_devices()) {
    if (device == *found) {
      backing = file;
    }
  }
  EXPECT_NE(backing, image) << "/sys names the file by its path here: this shows nothing";
  EXPECT_FALSE(detach_loop_device(*found));
  EXPECT_TRUE(wait_detached(image));
}

TEST_F(loop_device_test, capacity_follows_the_file_after_refresh) {
  auto image = make_image(dir_, "grow.img", 16 << 20);
  auto dev = attach_loop_device(image);
  ASSERT_TRUE(dev) << describe(dev.error());
  ASSERT_EQ(::truncate(image.c_str(), 48 << 20), 0);
  EXPECT_EQ(*block_device_size(*dev), uint64_t{16} << 20) << "not before LOOP_SET_CAPACITY";
  EXPECT_FALSE(refresh_loop_capacity(*dev));
  EXPECT_EQ(*block_device_size(*dev), uint64_t{48} << 20);
  EXPECT_FALSE(detach_loop_device(*dev));
}

TEST_F(loop_device_test, concurrent_attaches_get_distinct_devices) {
  constexpr int n = 6;
  std::vector<std::string> images;
  for (int i = 0; i < n; ++i) {
    images.push_back(make_image(dir_, "c" + std::to_string(i) + ".img", 8 << 20));
  }
  std::vector<std::string> devices(n);
  std::vector<std::string> errors(n);
  std::vector<std::thread> threads;
  for (int i = 0; i < n; ++i) {
    threads.emplace_back([&, i] {
      auto dev = attach_loop_device(images[i]);
      if (dev) {
        devices[i] = *dev;
      } else {
        errors[i] = describe(dev.error());
      }
    });
  }
  for (auto& t : threads) {
    t.join();
  }
  std::set<std::string> distinct;
  for (int i = 0; i < n; ++i) {
    ASSERT_TRUE(errors[i].empty()) << errors[i];
    distinct.insert(devices[i]);
    auto found = find_loop_device(images[i]);
    ASSERT_TRUE(found);
    EXPECT_EQ(*found, devices[i]);
  }
  EXPECT_EQ(distinct.size(), size_t{n});
  for (const auto& dev : devices) {
    EXPECT_FALSE(detach_loop_device(dev));
  }
}

TEST_F(loop_device_test, missing_image_is_not_found) {
  auto dev = attach_loop_device(dir_ + "/missing.img");
  ASSERT_FALSE(dev);
  EXPECT_EQ(code_of(dev.error()), ec::not_found);
  EXPECT_NE(describe(dev.error()).find("missing.img"), std::string::npos);
  auto found = find_loop_device(dir_ + "/missing.img");
  ASSERT_TRUE(found);
  EXPECT_EQ(*found, "");
  EXPECT_FALSE(block_device_size(dir_ + "/missing.img"));
}

} // namespace
} // namespace berth
