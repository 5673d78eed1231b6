#pragma once

#include <set>
#include <string>
#include <string_view>
#include <vector>

#include <caf/expected.hpp>

namespace berth {

/// One line of /proc/PID/mountinfo (see proc(5)); paths are unescaped.
struct mount_entry {
  int id = 0;                ///< mount ID
  int parent = 0;            ///< parent mount ID
  std::string root;          ///< path inside the filesystem that is mounted
  std::string mount_point;   ///< where, relative to the process root
  std::string options;       ///< per-mount options, e.g. "rw,nosuid"
  std::string fstype;        ///< e.g. "ext4", "nfs4"
  std::string source;        ///< e.g. "/dev/sda1", "server:/export"
  std::string super_options; ///< per-superblock options
};

/// Parses a whole mountinfo file. Octal escapes (\040 \011 \012 \134) are
/// decoded; optional fields up to the "-" separator are skipped.
/// Fails (ec::backend_failure) when the file cannot be read or a line is malformed,
/// naming the file and the line number.
caf::expected<std::vector<mount_entry>>
read_mountinfo(const std::string& path = "/proc/self/mountinfo");

/// Parses mountinfo text already in memory; `origin` names it in errors.
caf::expected<std::vector<mount_entry>> parse_mountinfo(std::string_view text,
                                                        const std::string& origin);

/// Only the (unescaped) mount points of a mountinfo file; cheaper than read_mountinfo.
caf::expected<std::set<std::string>>
read_mount_points(const std::string& path = "/proc/self/mountinfo");

/// True when `mount_point` (an absolute path, as mountinfo shows it) is the
/// mount point of some mount in /proc/self/mountinfo. False if unreadable.
bool is_mounted(const std::string& mount_point);

/// True when `path` is the root of a mount. Asks statx(2) for
/// STATX_ATTR_MOUNT_ROOT without syncing (cheap, and no round trip to an NFS
/// server); falls back to is_mounted() on kernels older than 5.8.
bool is_mount_point(const std::string& path);

/// Decodes mountinfo's octal escapes ("\040" -> ' ').
std::string unescape_mountinfo(std::string_view field);

} // namespace berth
