#pragma once

// A small tmpfs under a temp dir, for tests of a full filesystem (root needed).

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <filesystem>
#include <string>
#include <sys/mount.h>
#include <unistd.h>

#include "temp_dir.hpp"

namespace berth::test {

/// Mounts a tmpfs of `mib` MiB at TMP/fs; unmounts it when destroyed. ok() is false
/// (and why() says why) when it cannot be mounted: the caller skips.
class small_fs {
public:
  explicit small_fs(int mib) : mount_point_(tmp_ / "fs") {
    std::filesystem::create_directories(mount_point_);
    auto opts = "size=" + std::to_string(mib) + "m";
    if (::mount("tmpfs", mount_point_.c_str(), "tmpfs", 0, opts.c_str()) != 0) {
      why_ = std::string{"cannot mount a tmpfs (needs root): "} + std::strerror(errno);
      return;
    }
    mounted_ = true;
  }
  ~small_fs() {
    if (mounted_) {
      ::umount2(mount_point_.c_str(), MNT_DETACH);
    }
  }
  small_fs(const small_fs&) = delete;
  small_fs& operator=(const small_fs&) = delete;

  bool ok() const {
    return mounted_;
  }
  const std::string& why() const {
    return why_;
  }
  /// The mount point.
  const std::string& path() const {
    return mount_point_;
  }

  /// Writes `name` until the filesystem is full; returns the bytes written.
  size_t fill(const std::string& name) const {
    auto path = mount_point_ + "/" + name;
    int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (fd < 0) {
      return 0;
    }
    static const std::string block(1 << 16, 'f');
    size_t total = 0;
    for (size_t chunk = block.size(); chunk > 0;) {
      auto n = ::write(fd, block.data(), chunk);
      if (n > 0) {
        total += static_cast<size_t>(n);
        continue;
      }
      chunk /= 2; // fill the last blocks too
    }
    ::close(fd);
    return total;
  }

private:
  temp_dir tmp_;
  std::string mount_point_;
  bool mounted_ = false;
  std::string why_;
};

} // namespace berth::test
