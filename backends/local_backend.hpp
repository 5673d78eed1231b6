#pragma once

#include <chrono>
#include <filesystem>
#include <string>

#include "backends/backend.hpp"
#include "backends/detail/tree_copy.hpp"
#include "backends/local_options.hpp"
#include "backends/mount_counter.hpp"

namespace berth {

/// Docker-local-style volumes. A volume NAME lives at STATE/volumes/NAME/ with
/// `data/` (its storage when it has no `type`) and `mnt/` (where it is mounted).
/// Without options, data/ is bind-mounted on mnt/ with mount(2); with
/// `type`/`device`/`o`/`size` any of tmpfs, bind, ext4/xfs/btrfs (mount(2)),
/// nfs/nfs4/efs (mount(8) helper, optionally inside a network namespace).
/// A plain directory volume can be copied: a snapshot to STATE/snapshots/NAME/data, or
/// a volume made from a snapshot or another volume (local_copy.cpp); and exported and
/// imported (local_transfer.cpp).
/// Safe to call from several threads at once (for different volumes): the only state
/// it keeps is how many mounts each volume has had, under a mutex. STATE/volumes gets
/// mode 0701 (as Docker's own volumes root): others may reach a mountpoint they know,
/// but not list the volumes.
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
  bool copies_content() const override;
  caf::error check_copy_source(const volume_record& source) const override;
  caf::expected<std::string> create_copy(const volume_record& rec) override;
  /// A copy of the volume's data/ at STATE/exports/ID/data, made as a snapshot's is.
  caf::expected<export_view> open_export(const volume_record& rec, const std::string& id) override;
  caf::error close_export(const volume_record& rec, const std::string& id) override;
  /// The staging tree moved (renamed: it lies under STATE) to be the volume's data/.
  caf::error create_from_tree(const volume_record& rec, const std::string& tree) override;

  /// STATE/exports under the state directory `state_dir`: the exports' copies, none of
  /// which a record holds.
  static std::string exports_dir_of(const std::string& state_dir) {
    return state_dir + "/exports";
  }

  /// STATE/volumes/NAME, or "" for an invalid name.
  std::string volume_dir(const std::string& volume) const;

  /// STATE/snapshots/NAME, or "" for an invalid name.
  std::string snapshot_dir(const std::string& snapshot) const;

  /// Where `rec`'s storage is: snapshot_dir for a snapshot, else volume_dir.
  std::string storage_dir(const volume_record& rec) const;


private:
  caf::error check_name(const std::string& volume) const;
  /// STATE/volumes (mode 0701) or, for a snapshot, STATE/snapshots (0700), made if missing.
  caf::error make_storage_root(const volume_record& rec) const;
  /// `root` made if missing, with `mode` (whatever the umask).
  caf::error make_root(const std::string& root, std::filesystem::perms mode,
                       const std::string& what) const;
  /// Deletes `dir`, a directory of berth's that no record holds (detail::delete_copy);
  /// refused while a mount lies at or under it.
  caf::error delete_unmounted(const std::string& dir, const std::string& what) const;
  /// Deletes `dir`, a copy no record holds (left by a copy whose caller was told it failed),
  /// so that a create of its name starts afresh; refused while a mount lies under it.
  caf::error drop_orphan_copy(const std::string& dir, const std::string& what) const;
  /// Copies `source_data` (of the volume `volume`, "" for a snapshot's) to `target`
  /// (detail::copy_directory_volume, marked as made from `source`), and says how consistent
  /// the copy is: "" when nothing had the volume mounted before, after or in between (its
  /// mount count unmoved), else copy_crash_consistent.
  caf::expected<std::string> copy_data(const std::string& volume, const std::string& source_data,
                                       const std::string& target, const std::string& source,
                                       bool with_mountpoint, const std::string& what);
  /// The copy_marker of a copy made now from `source`.
  detail::copy_mark mark_of(const std::string& source) const;
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
  std::string snapshots_dir_;
  std::string exports_dir_;
  std::chrono::milliseconds helper_timeout_;
  mount_counter mounts_;
};

} // namespace berth
