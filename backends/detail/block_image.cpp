#include "backends/detail/block_image.hpp"

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <vector>

#include <fcntl.h>
#include <spdlog/spdlog.h>
#include <sys/stat.h>
#include <unistd.h>

#include "backends/detail/fs_freeze.hpp"
#include "backends/helper_process.hpp"
#include "backends/loop_device.hpp"
#include "backends/mountinfo.hpp"
#include "core/crash_point.hpp"
#include "core/errors.hpp"
#include "core/volume_record.hpp"

namespace fs = std::filesystem;

namespace berth {

namespace {

caf::error sys_error(int e, const std::string& what) {
  return make_error(e == ENOSPC ? ec::out_of_range : ec::backend_failure,
                    what + ": " + std::strerror(e));
}

caf::error fsync_path(const std::string& path, int flags, const std::string& what) {
  int fd = ::open(path.c_str(), flags | O_CLOEXEC);
  if (fd < 0) {
    int e = errno;
    return sys_error(e, what + ": cannot open " + path + " to fsync it");
  }
  int rc = ::fsync(fd);
  int e = errno;
  ::close(fd);
  if (rc != 0) {
    return sys_error(e, what + ": fsync of " + path + " failed");
  }
  return {};
}

caf::error fsync_dir_of(const std::string& path, const std::string& what) {
  return fsync_path(fs::path(path).parent_path().string(), O_RDONLY | O_DIRECTORY, what);
}

caf::error make_parent(const std::string& image, const std::string& what) {
  std::error_code err;
  fs::create_directories(fs::path(image).parent_path(), err);
  if (err) {
    return make_error(ec::backend_failure, what + ": cannot create "
                                             + fs::path(image).parent_path().string() + ": "
                                             + err.message());
  }
  return {};
}

/// Sets the file at `path` to `size` bytes when it is smaller (or, with `may_shrink`,
/// larger), and fsyncs it.
caf::error truncate_and_sync(const std::string& path, uint64_t size, const std::string& what,
                             bool may_shrink = false) {
  int fd = ::open(path.c_str(), O_WRONLY | O_CLOEXEC | O_NOFOLLOW);
  if (fd < 0) {
    int e = errno;
    return sys_error(e, what + ": cannot open " + path);
  }
  struct stat st {};
  int rc = ::fstat(fd, &st);
  auto now = static_cast<uint64_t>(st.st_size);
  if (rc == 0 && (now < size || (may_shrink && now > size))) {
    rc = ::ftruncate(fd, static_cast<off_t>(size));
  }
  if (rc == 0) {
    rc = ::fsync(fd);
  }
  int e = errno;
  ::close(fd);
  if (rc != 0) {
    return sys_error(e, what + ": cannot size " + path + " to " + std::to_string(size)
                          + " bytes");
  }
  return {};
}

/// Moves the finished temp file to its final name, durably. Never replaces an
/// image: a copy that outlived its caller must not overwrite the image a retry
/// committed (and a pod may already be writing to); the first one in wins.
caf::error commit_temp(const std::string& temp, const std::string& image,
                       const std::string& what) {
  if (::renameat2(AT_FDCWD, temp.c_str(), AT_FDCWD, image.c_str(), RENAME_NOREPLACE) != 0) {
    int e = errno;
    ::unlink(temp.c_str());
    if (e == EEXIST) {
      spdlog::warn("{}: {} was committed meanwhile; dropped this copy", what, image);
      return {};
    }
    return sys_error(e, what + ": cannot rename " + temp + " to " + image);
  }
  return fsync_dir_of(image, what);
}

/// What freeze_for_copy() did: the freeze (empty when nothing was mounted), and whether
/// the image was attached with no filesystem mounted, as a raw block volume is, whose
/// writers nothing can stop.
struct copy_guard {
  filesystem_freeze frozen;
  bool raw_attached = false;
};

/// Freezes the filesystem of the loop device backing `image` while it is mounted (all
/// its mounts share one superblock), then flushes the device's own buffers: the image
/// then holds a clean filesystem until the freeze ends. Nothing mounted: nothing frozen.
caf::expected<copy_guard> freeze_for_copy(const std::string& image, const std::string& what) {
  auto device = find_loop_device(image);
  if (!device) {
    return device.error();
  }
  if (device->empty()) {
    return copy_guard{};
  }
  auto entries = read_mountinfo();
  if (!entries) {
    return entries.error();
  }
  copy_guard guard;
  guard.raw_attached = true;
  for (const auto& e : *entries) {
    if (e.source == *device) {
      auto made = filesystem_freeze::freeze(e.mount_point, what);
      if (!made) {
        return made.error();
      }
      guard.frozen = std::move(*made);
      guard.raw_attached = false;
      break;
    }
  }
  if (int fd = ::open(device->c_str(), O_RDONLY | O_CLOEXEC); fd >= 0) {
    ::fsync(fd);
    ::close(fd);
  }
  return guard;
}

} // namespace

caf::expected<uint64_t> block_image_size(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) {
    int e = errno;
    if (e == ENOENT) {
      return make_error(ec::not_found, "no image at " + path);
    }
    return sys_error(e, "cannot stat " + path);
  }
  if (!S_ISREG(st.st_mode)) {
    return make_error(ec::backend_failure, path + " is not a regular file");
  }
  return static_cast<uint64_t>(st.st_size);
}

namespace {

/// ".NAME.tmp." : the prefix of every temp file of one image.
std::string temp_prefix(const fs::path& image) {
  return "." + image.stem().string() + ".tmp.";
}

} // namespace

bool is_block_image_temp_name(const std::string& file_name) {
  return file_name.size() > 1 && file_name[0] == '.'
         && file_name.find(".tmp.") != std::string::npos;
}

std::string block_image_temp_path(const std::string& image) {
  // Unique per call: a copy that outlived its caller's timeout must never rename
  // a retry's half-written file (or have its own unlinked) under the final name.
  static std::atomic<uint64_t> next{0};
  fs::path p(image);
  return (p.parent_path()
          / (temp_prefix(p) + std::to_string(::getpid()) + "." + std::to_string(++next)))
    .string();
}

caf::error create_sparse_block_image(const std::string& image, uint64_t size,
                                     const std::string& what) {
  if (auto err = make_parent(image, what)) {
    return err;
  }
  const std::string temp = block_image_temp_path(image);
  int fd = ::open(temp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (fd < 0) {
    int e = errno;
    return sys_error(e, what + ": cannot create " + temp);
  }
  int rc = ::ftruncate(fd, static_cast<off_t>(size));
  if (rc == 0) {
    rc = ::fsync(fd);
  }
  int e = errno;
  ::close(fd);
  if (rc != 0) {
    ::unlink(temp.c_str());
    return sys_error(e, what + ": cannot make " + temp + " " + std::to_string(size) + " bytes");
  }
  return commit_temp(temp, image, what);
}

caf::expected<std::string> copy_block_image(const std::string& source, const std::string& image,
                                            uint64_t min_size, std::chrono::milliseconds timeout,
                                            const std::string& what) {
  if (auto err = make_parent(image, what)) {
    return err;
  }
  const std::string temp = block_image_temp_path(image);
  auto guard = freeze_for_copy(source, what);
  if (!guard) {
    return guard.error();
  }
  auto& frozen = guard->frozen;
  auto copied = run_helper_checked({"cp", "--reflink=auto", "--sparse=always", "--", source,
                                    temp},
                                   timeout, what + ": copy of " + source + " failed");
  // A crash here leaves what one during the copy would: a temp file no record holds, and the
  // source's filesystem frozen. The start-up sweeps delete the one and thaw the other.
  test_crash_point("block-copy-frozen");
  frozen.thaw(); // writers wait only for the copy itself
  if (!copied) {
    ::unlink(temp.c_str());
    return copied.error();
  }
  if (auto err = truncate_and_sync(temp, min_size, what)) {
    ::unlink(temp.c_str());
    return err;
  }
  if (auto err = commit_temp(temp, image, what)) {
    return err;
  }
  return guard->raw_attached ? std::string{copy_crash_consistent} : std::string{};
}

caf::error rewrite_block_image(const std::string& image,
                               const std::function<caf::error(const std::string& copy)>& edit,
                               std::chrono::steady_clock::time_point deadline,
                               const std::string& what) {
  using namespace std::chrono;
  const std::string temp = block_image_temp_path(image);
  const auto left = duration_cast<milliseconds>(deadline - steady_clock::now());
  auto copied =
    run_helper_checked({"cp", "--reflink=auto", "--sparse=always", "--", image, temp},
                       std::max(left, milliseconds{1}), what + ": copy of " + image + " failed");
  caf::error err = copied ? edit(temp) : copied.error();
  if (!err) {
    err = truncate_and_sync(temp, 0, what);
  }
  // Past the deadline the caller may have given up on this call: it must not change the
  // image after its caller was told it failed.
  if (!err && steady_clock::now() > deadline) {
    err = make_error(ec::timeout,
                     what
                       + ": it took longer than its bound (90% of "
                         "--backend-timeout-ms); the image is as it was");
  }
  if (err) {
    ::unlink(temp.c_str());
    return err;
  }
  // A crash here leaves the edited copy as a temp file, which the start-up sweep deletes.
  test_crash_point("block-rewrite-edited");
  if (::rename(temp.c_str(), image.c_str()) != 0) {
    int e = errno;
    ::unlink(temp.c_str());
    return sys_error(e, what + ": cannot rename " + temp + " to " + image);
  }
  return fsync_dir_of(image, what);
}

caf::error grow_block_image(const std::string& image, uint64_t size, const std::string& what) {
  return truncate_and_sync(image, size, what);
}

caf::error shrink_block_image(const std::string& image, uint64_t size, const std::string& what) {
  return truncate_and_sync(image, size, what, true);
}

caf::error remove_block_image(const std::string& image, const std::string& what) {
  std::vector<std::string> paths{image};
  // Temp files a crash left behind (and any copy still running is pointless now).
  std::error_code ec_ignored;
  auto prefix = temp_prefix(image);
  for (const auto& entry : fs::directory_iterator(fs::path(image).parent_path(), ec_ignored)) {
    if (entry.path().filename().string().rfind(prefix, 0) == 0) {
      paths.push_back(entry.path().string());
    }
  }
  bool removed = false;
  for (const auto& path : paths) {
    if (::unlink(path.c_str()) == 0) {
      removed = true;
    } else if (errno != ENOENT) {
      int e = errno;
      return sys_error(e, what + ": cannot delete " + path);
    }
  }
  return removed ? fsync_dir_of(image, what) : caf::error{};
}

} // namespace berth
