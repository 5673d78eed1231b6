#pragma once

// CSI NodePublish/NodeUnpublish as bind mounts with mount(2)/umount2(2): shared
// by every backend that stages a volume at one path and binds it to targets.
// Both act on a mount at the target only when mountinfo shows it comes from
// the volume (its origins), and delete only a target the publish created.

#include <optional>
#include <string>
#include <vector>

#include <caf/error.hpp>
#include <caf/expected.hpp>

#include "backends/mountinfo.hpp"

namespace berth {

/// What one volume's mounts look like in mountinfo.
struct volume_origins {
  std::optional<mount_origin> fs;   ///< a bind of its mounted filesystem
  std::optional<mount_origin> node; ///< a bind of its device node (raw block)

  /// True when `e` comes from this volume, either way.
  bool owns(const mount_entry& e) const;
};

/// Bind-mounts `source` on `target` (canonical). When the topmost mount at
/// `target` already comes from `mine` the same way (`file`: the device node;
/// else the filesystem) and as read-only or not as `flags` says, that is
/// success; mounted from `mine` the other way is ec::already_exists; any other
/// mount there is ec::failed_precondition, and it is left alone.
/// Otherwise creates `target` when missing: a directory, or for `file` (a raw
/// block device node as `source`) an empty regular file; parents too. `flags`
/// (MS_RDONLY, MS_NOEXEC, ...) are applied with a second MS_REMOUNT|MS_BIND
/// call, as a bind mount ignores them. A symlink at `target` is refused. On
/// failure nothing stays mounted or created. Returns true when it created
/// `target`. `what` names the volume in errors, e.g. "volume v1". The mounts at `target`
/// are judged from `mounts`, the mount table its caller read for its own checks just
/// before: reading and parsing mountinfo was most of a publish's cost (docs/benchmarks.md,
/// "A publish and an unpublish read the mount table once, A/B").
caf::expected<bool> bind_publish(const std::string& source, const std::string& target, bool file,
                                 unsigned long flags, const volume_origins& mine,
                                 const std::string& what, const std::vector<mount_entry>& mounts);

/// bind_publish() judged from mountinfo as it is now.
caf::expected<bool> bind_publish(const std::string& source, const std::string& target, bool file,
                                 unsigned long flags, const volume_origins& mine,
                                 const std::string& what);

/// Unmounts the mounts at `target` (canonical) that come from `mine`, topmost
/// first (UMOUNT_NOFOLLOW); a foreign mount is never unmounted: with one of
/// `mine` under it that is ec::failed_precondition, else it is left and that is
/// success. Then, only when `created` and nothing is mounted there any more,
/// deletes `target`: an empty directory or a file (a directory that still holds
/// files is ec::failed_precondition and stays). A missing target is success; a
/// symlink is refused (ec::invalid_argument) and left. The mounts at `target` are those
/// of `mounts`, the mount table its caller read just before, as for bind_publish().
caf::error bind_unpublish(const std::string& target, const volume_origins& mine, bool created,
                          const std::string& what, const std::vector<mount_entry>& mounts);

} // namespace berth
