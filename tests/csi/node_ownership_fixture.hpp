#pragma once

// berth acts only on what it created or what its record holds (docs/design.md,
// "Only what berth owns"), against the real berthd through its gRPC socket:
// - node paths are confined to --kubelet-dir (after resolving the parent's symlinks);
// - a publish onto a mount that is not this volume's is refused;
// - unpublish and unstage unmount only this volume's mounts and delete only what
//   berth created;
// - an unstage or unpublish the record lacks cleans only this volume's leftovers
//   (what a crash between a side effect and its commit leaves).
// Foreign filesystems are tmpfs mounts the test makes itself; the volume's own
// leftovers are made by hand with losetup and mount(2), as a crash would leave them.
//
// The fixture of those tests (node_ownership_test.cpp, node_confinement_test.cpp): mounts
// of the test's own and the volume's leftovers made by hand; the node calls whose status
// the tests read are csi_fixture's.

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <string>

#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tests/csi/csi_fixture.hpp"

namespace berth::csi_test {

class NodeOwnershipTest : public csi_fixture {
protected:
  /// Mounts a small tmpfs at `path` (created) holding the file "foreign" = `tag`.
  static ::testing::AssertionResult mount_foreign(const std::string& path,
                                                  const std::string& tag = "not berth's") {
    std::filesystem::create_directories(path);
    if (::mount("tmpfs", path.c_str(), "tmpfs", 0, "size=1m") != 0) {
      return ::testing::AssertionFailure() << "mount tmpfs on " << path << ": "
                                           << std::strerror(errno);
    }
    if (write_file_sync(path + "/foreign", tag) != 0) {
      return ::testing::AssertionFailure() << "cannot write " << path << "/foreign";
    }
    return ::testing::AssertionSuccess();
  }

  /// True while the topmost mount at `path` is the test's tmpfs with its file intact.
  static bool foreign_intact(const std::string& path, const std::string& tag = "not berth's") {
    auto m = mount_at(path);
    return m && m->fstype == "tmpfs" && read_file(path + "/foreign").value_or("") == tag;
  }

  static size_t mount_count(const std::string& path) {
    size_t n = 0;
    for (auto& e : read_mountinfo()) {
      n += e.mount_point == path ? 1 : 0;
    }
    return n;
  }

  static bool exists(const std::string& path) {
    struct stat st {};
    return ::lstat(path.c_str(), &st) == 0;
  }

  /// The image file of block volume `id`.
  std::string image_of(const std::string& id) {
    return berthd().state_dir() + "/block/volumes/" + id + ".img";
  }

  /// Attaches the volume's image with losetup and mounts it at `path`: the host
  /// state a crash between a stage and its commit leaves. Returns the loop device.
  std::string stage_by_hand(const std::string& id, const std::string& path) {
    auto out = berthd().root() + "/losetup.out";
    auto cmd = "losetup --find --show " + image_of(id) + " > " + out;
    if (std::system(cmd.c_str()) != 0) {
      ADD_FAILURE() << cmd << " failed";
      return "";
    }
    auto dev = read_file(out).value_or("");
    while (!dev.empty() && dev.back() == '\n') {
      dev.pop_back();
    }
    std::filesystem::create_directories(path);
    if (::mount(dev.c_str(), path.c_str(), "xfs", 0, nullptr) != 0) {
      ADD_FAILURE() << "mount " << dev << " on " << path << ": " << std::strerror(errno);
    }
    return dev;
  }

  /// Creates, stages (mount) and returns volume `name`; `staging` gets its path.
  ::testing::AssertionResult staged_volume(const std::string& name, v1::Volume* vol,
                                           std::string* staging) {
    auto ok = create_volume(name, vol);
    if (!ok) {
      return ok;
    }
    *staging = staging_path(vol->volume_id());
    return stage(vol->volume_id(), *staging);
  }
};

} // namespace berth::csi_test
