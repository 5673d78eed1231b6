#pragma once

// CSI NodePublish/NodeUnpublish as bind mounts with mount(2)/umount2(2): shared
// by every backend that stages a volume at one path and binds it to targets.

#include <string>

#include <caf/error.hpp>

namespace berth {

/// Bind-mounts `source` on `target` and returns no error when done or already
/// done (`target` is a mount point). Creates `target` first: a directory, or
/// for `file` (a raw block device node as `source`) an empty regular file;
/// parents too. `flags` (MS_RDONLY, MS_NOEXEC, ...) are applied with a second
/// MS_REMOUNT|MS_BIND call, as a bind mount ignores them. A symlink at `target`
/// is refused. On failure nothing stays mounted. `what` names the volume in
/// errors, e.g. "volume v1".
caf::error bind_publish(const std::string& source, const std::string& target, bool file,
                        unsigned long flags, const std::string& what);

/// Unmounts `target` while it is a mount point (UMOUNT_NOFOLLOW), then deletes
/// it: an empty directory, a file, or a symlink itself (never what a link
/// points to). A missing target is success; a directory that still holds
/// files is ec::failed_precondition (it is not deleted).
caf::error bind_unpublish(const std::string& target, const std::string& what);

} // namespace berth
