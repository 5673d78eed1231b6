#pragma once

// What the CSI suite checks on the host, independently of berthd: mountinfo,
// loop devices, sizes. Also the clean-up that runs after every test.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace berth::csi_test {

/// One line of /proc/self/mountinfo (the fields the suite needs).
struct mount_entry {
  std::string dev;         ///< "major:minor"
  std::string root;        ///< root of the mount within its filesystem
  std::string mount_point;
  std::string fstype;
  std::string source;
  std::string options;     ///< per-mount options, e.g. "rw,relatime"
};

/// Every entry of /proc/self/mountinfo, in order (octal escapes decoded).
std::vector<mount_entry> read_mountinfo();

/// The topmost mount at exactly `path`, if any.
std::optional<mount_entry> mount_at(const std::string& path);

/// Mount points at or below `dir`.
std::vector<std::string> mounts_under(const std::string& dir);

/// Loop devices ("/dev/loopN") whose backing file is at or below `dir`.
std::vector<std::string> loops_under(const std::string& dir);

/// The backing file of a loop device ("" when it is not attached).
std::string loop_backing_file(const std::string& device);

/// Total bytes and inodes of the filesystem at `path` (statvfs).
struct fs_size {
  uint64_t total_bytes = 0;
  uint64_t free_bytes = 0;
  uint64_t total_inodes = 0;
};
std::optional<fs_size> statvfs_of(const std::string& path);

/// Size in bytes of the block device at `path` (BLKGETSIZE64), if it is one.
std::optional<uint64_t> block_device_bytes(const std::string& path);

/// Writes `data` to `path` (create/truncate) and fsyncs it. Returns errno, 0 on success.
int write_file_sync(const std::string& path, const std::string& data);

/// The contents of `path`, or nullopt when it cannot be read.
std::optional<std::string> read_file(const std::string& path);

/// Lazily unmounts everything at or below `dir` (deepest first) and detaches every
/// loop device backed by a file there, waiting (at most 5 s) for a busy one the kernel
/// detaches once its lazily unmounted filesystem is released. Returns what it could not
/// clean ("" when all).
std::string clean_under(const std::string& dir);

/// clean_under + rm -rf (on one filesystem) of `dir`; refuses to delete while a mount
/// remains below it. Returns what went wrong ("" when all is gone).
std::string clean_and_remove(const std::string& dir);

} // namespace berth::csi_test
