#pragma once

// A filesystem frozen (FIFREEZE) while a snapshot copies the image under it: every write
// is flushed and new ones wait, so the copy holds a clean filesystem (docs/running.md,
// "What a consistent snapshot means"). A crash while frozen would leave the filesystem
// frozen and its writers blocked, so berthd thaws its block filesystems at start.

#include <string>

#include <caf/expected.hpp>

namespace berth {

/// Thaws, when destroyed, what it froze.
class filesystem_freeze {
public:
  filesystem_freeze() = default;
  filesystem_freeze(const filesystem_freeze&) = delete;
  filesystem_freeze& operator=(const filesystem_freeze&) = delete;
  filesystem_freeze(filesystem_freeze&& other) noexcept;
  filesystem_freeze& operator=(filesystem_freeze&& other) noexcept;
  ~filesystem_freeze();

  /// Freezes the filesystem mounted at `path`; ec::backend_failure naming `what` when
  /// the kernel refuses (EBUSY: frozen by someone else already).
  static caf::expected<filesystem_freeze> freeze(const std::string& path, const std::string& what);

  /// Where the frozen filesystem is mounted ("" when nothing is frozen).
  const std::string& path() const {
    return path_;
  }

  /// Thaws now (logged when it fails); nothing when nothing is frozen.
  void thaw();

private:
  std::string path_;
  std::string what_;
  int fd_ = -1;
};

/// FITHAW of the filesystem mounted at `path`: true when it was frozen, false when it
/// was not (EINVAL); an error names `path` otherwise.
caf::expected<bool> thaw_filesystem(const std::string& path);

} // namespace berth
