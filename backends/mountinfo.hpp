#pragma once

#include <optional>
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
  std::string dev;           ///< "major:minor" of the filesystem (st_dev of its files)
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

/// The first of `points` that is `dir` or lies below it, "" when none: a mount that
/// std::filesystem::remove_all(dir) would descend into.
std::string mount_at_or_under(const std::set<std::string>& points, const std::string& dir);

/// True when `mount_point` (an absolute path, as mountinfo shows it) is the
/// mount point of some mount in /proc/self/mountinfo. False if unreadable.
bool is_mounted(const std::string& mount_point);

/// True when `path` is the root of a mount. Asks statx(2) for
/// STATX_ATTR_MOUNT_ROOT without syncing (cheap, and no round trip to an NFS
/// server); falls back to is_mounted() on kernels older than 5.8.
bool is_mount_point(const std::string& path);

// -- where a mount comes from (docs/design.md, "Only what berth owns") ------------

/// What mountinfo shows for a (bind) mount of some path: the device of the
/// filesystem holding it and the path inside that filesystem. Two mounts with
/// the same origin show the same files.
struct mount_origin {
  std::string dev;  ///< "major:minor"
  std::string root; ///< e.g. "/" for a whole filesystem, "/loop3" for a device node bound from /dev
};

bool operator==(const mount_origin& a, const mount_origin& b);

/// The mounts at exactly `mount_point` (canonical), bottom first: the last one
/// is the topmost, the one a path lookup sees. Stacked mounts are ordered by
/// their parent links, not by their order in the file.
std::vector<const mount_entry*> mounts_at(const std::vector<mount_entry>& mounts,
                                          const std::string& mount_point);

/// The origin a bind mount of `path` (canonical, absolute) shows: the topmost
/// mount whose mount point is `path` or its nearest ancestor, with `path`'s rest
/// below that mount point appended to its root. nullopt when no mount holds it.
std::optional<mount_origin> origin_of(const std::vector<mount_entry>& mounts,
                                      const std::string& path);

/// The origin of `e` itself.
mount_origin origin_of(const mount_entry& e);

/// "major:minor" of a block device number, as mountinfo writes it.
std::string dev_string(unsigned long long rdev);

/// True when `options` (per-mount, e.g. "ro,nosuid") has "ro".
bool is_read_only(const std::string& options);

/// Decodes mountinfo's octal escapes ("\040" -> ' ').
std::string unescape_mountinfo(std::string_view field);

} // namespace berth
