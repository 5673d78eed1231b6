#pragma once

// What the block backend's tests share: small helpers, and the fixture that
// gives each root test a state dir of its own and takes down every mount and
// loop device under it afterwards, even when the test failed halfway.

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>
#include <sys/mount.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include "backends/block_backend.hpp"
#include "backends/helper_process.hpp"
#include "backends/loop_device.hpp"
#include "backends/mountinfo.hpp"
#include "core/errors.hpp"
#include "temp_state.hpp"

namespace berth::block_test {

namespace fs = std::filesystem;
using namespace std::chrono_literals;

inline constexpr uint64_t mib = uint64_t{1} << 20;

inline ec code_of(const caf::error& err) {
  return static_cast<ec>(err.code());
}

inline bool mentions(const caf::error& err, const std::string& word) {
  return describe(err).find(word) != std::string::npos;
}

inline volume_record make_record(const std::string& name, uint64_t capacity,
                          const std::string& fs_type = "xfs") {
  volume_record rec;
  rec.name = name;
  rec.backend = "block";
  rec.options = {{"fsType", fs_type}};
  rec.capacity_bytes = capacity;
  return rec;
}

inline volume_spec make_spec(uint64_t required, uint64_t limit, const std::string& fs_type = "xfs") {
  volume_spec spec;
  spec.backend = "block";
  spec.parameters = {{"fsType", fs_type}};
  spec.required_bytes = required;
  spec.limit_bytes = limit;
  return spec;
}

inline std::string read_text(const std::string& p) {
  std::ifstream in(p);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

inline uint64_t fs_total(const std::string& path) {
  struct statvfs vfs {};
  EXPECT_EQ(::statvfs(path.c_str(), &vfs), 0) << path;
  return static_cast<uint64_t>(vfs.f_blocks) * vfs.f_frsize;
}

inline bool on_path(const std::string& program) {
  auto res = run_helper({"sh", "-c", "command -v " + program}, 5s);
  return res && res->exit_code == 0;
}

/// Waits (up to 2 s) until no loop device backs `image` (a detach while
/// another process holds the device completes at its last close).
inline bool wait_detached(const std::string& image) {
  for (int i = 0; i < 200; ++i) {
    auto dev = find_loop_device(image);
    if (dev && dev->empty()) {
      return true;
    }
    std::this_thread::sleep_for(10ms);
  }
  return false;
}

// -- with root: real loop devices, mkfs and mounts -------------------------------

class block_backend_test : public ::testing::Test {
protected:
  void SetUp() override {
    std::string why;
    if (!test::is_root()) {
      why = "needs root";
    } else if (::access("/dev/loop-control", R_OK | W_OK) != 0) {
      why = "needs /dev/loop-control";
    } else {
      for (const char* tool : {"mkfs.xfs", "mkfs.ext4", "blkid", "xfs_growfs", "resize2fs"}) {
        if (!on_path(tool)) {
          why = std::string("needs ") + tool;
          break;
        }
      }
    }
    if (!why.empty()) {
      std::cerr << "\n***** SKIPPED: block backend tests " << why << " *****\n\n";
      GTEST_SKIP() << "SKIPPED: block backend tests " << why;
    }
    ASSERT_FALSE(state_.path().empty());
    root_ = fs::canonical(state_.path()).string();
    fs::create_directories(kubelet_dir());
    backend_ = std::make_unique<block_backend>(root_, 120s, block_space{}, kubelet_dir());
  }

  /// Unmounts everything under the state dir and detaches its loop devices,
  /// even when a test failed halfway.
  void TearDown() override {
    if (!root_.empty()) {
      test::unmount_below(root_);
      for (const auto& [device, backing] : list_loop_devices()) {
        if (backing.compare(0, root_.size() + 1, root_ + "/") == 0) {
          detach_loop_device(device);
        }
      }
    }
    state_.cleanup();
  }

  /// The backend's --kubelet-dir: staging and target paths must lie below it.
  std::string kubelet_dir() const {
    return root_ + "/kubelet";
  }

  /// Publishes as the volume actor does: the record keeps the publication and
  /// whether the publish created the target (what unpublish may delete).
  caf::error publish(volume_record& rec, const std::string& where, publication how) {
    auto created = backend_->publish(rec, where, how);
    if (!created) {
      return created.error();
    }
    auto known = rec.published.find(where);
    how.created = *created || (known != rec.published.end() && known->second.created);
    rec.published[where] = how;
    return {};
  }

  /// Unpublishes as the volume actor does: the record forgets the target.
  caf::error unpublish(volume_record& rec, const std::string& where) {
    auto err = backend_->unpublish(rec, where);
    if (!err) {
      rec.published.erase(where);
    }
    return err;
  }

  std::string staging(const std::string& name) const {
    return root_ + "/kubelet/staging/" + name;
  }
  std::string target(const std::string& name, const std::string& pod = "pod1") const {
    return root_ + "/kubelet/pods/" + pod + "/" + name;
  }

  /// create + stage (filesystem); records the staging path and device.
  void create_and_stage(volume_record& rec, std::vector<std::string> flags = {}) {
    ASSERT_FALSE(backend_->create(rec));
    stage_request req{staging(rec.name), false, "", flags};
    auto dev = backend_->stage(rec, req);
    ASSERT_TRUE(dev) << describe(dev.error());
    rec.staging_path = req.staging_path;
    rec.stage_flags = flags;
    rec.device = *dev;
  }

  test::temp_state state_;
  std::string root_;
  std::unique_ptr<block_backend> backend_;
};

} // namespace berth::block_test
