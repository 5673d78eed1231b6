#pragma once

#include <chrono>
#include <string>

#include "backends/backend.hpp"
#include "backends/local_options.hpp"

namespace berth {

/// Docker-local-style volumes. A volume NAME lives at STATE/volumes/NAME/ with
/// `data/` (its storage when it has no `type`) and `mnt/` (where it is mounted).
/// Without options, data/ is bind-mounted on mnt/ with mount(2); with
/// `type`/`device`/`o`/`size` any of tmpfs, bind, ext4/xfs/btrfs (mount(2)),
/// nfs/nfs4/efs (mount(8) helper, optionally inside a network namespace).
/// Safe to call from several threads at once (for different volumes): it keeps
/// no mutable state. STATE/volumes gets mode 0701 (as Docker's own volumes root):
/// others may reach a mountpoint they know, but not list the volumes.
class local_backend : public backend {
public:
  /// @param state_dir the state root; volumes go to STATE/volumes/.
  /// @param helper_timeout after this a mount helper is killed (ec::timeout).
  explicit local_backend(std::string state_dir,
                         std::chrono::milliseconds helper_timeout = std::chrono::seconds(30));

  // -- backend ---------------------------------------------------------------
  std::string name() const override;
  caf::error validate(const std::string& volume, const option_map& options) const override;
  caf::error create(const volume_record& rec) override;
  caf::expected<std::string> mount(const volume_record& rec) override;
  caf::error unmount(const volume_record& rec, bool lazy) override;
  caf::error remove(const volume_record& rec) override;
  std::string mountpoint(const volume_record& rec) const override;

  /// STATE/volumes/NAME, or "" for an invalid name.
  std::string volume_dir(const std::string& volume) const;

private:
  caf::error check_name(const std::string& volume) const;
  /// What the plan's source may be: a bind source never the state directory, under
  /// it or above it; a block device a block device. Checked at create and again
  /// at every mount (a symlink may have changed meanwhile).
  caf::error check_source(const std::string& volume, const mount_plan& plan) const;
  /// mount(2); on failure `sys_errno` holds errno (ENOENT: the dirs are missing).
  caf::error mount_syscall(const volume_record& rec, const mount_plan& plan,
                           const std::string& target, int& sys_errno) const;
  caf::error mount_helper(const volume_record& rec, const mount_plan& plan,
                          const std::string& target);

  std::string state_dir_; ///< resolved (symlinks followed)
  std::string volumes_dir_;
  std::chrono::milliseconds helper_timeout_;
};

} // namespace berth
