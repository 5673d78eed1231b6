#pragma once

#include <chrono>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "backends/backend.hpp"
#include "backends/loop_device.hpp"
#include "backends/modify_cooldown.hpp"
#include "backends/mount_counter.hpp"
#include "backends/mountinfo.hpp"
#include "backends/node_path.hpp"
#include "core/telemetry/volume_health.hpp"

namespace berth {

/// Where block images live and what room they must leave to the journal.
struct block_space {
  /// Images go to BLOCK_DIR/volumes and BLOCK_DIR/snapshots; "" means STATE/block.
  std::string block_dir;
  /// The journal's reserve file (file_store's `reserve`); "" when there is none.
  std::string reserve_path;
  /// The size the reserve is meant to hold.
  uint64_t reserve_bytes = 0;
};

/// CSI volumes as sparse image files on loop devices, formatted xfs or ext4.
///
///   BLOCK/volumes/NAME.img    a volume (rec.kind == record_kind::volume)
///   BLOCK/snapshots/NAME.img  a snapshot (rec.kind == record_kind::snapshot)
///
/// BLOCK is STATE/block unless block_space::block_dir names another place (another
/// filesystem keeps thin images from filling the journal's).
/// Stage attaches the image to a loop device (found again by its backing file,
/// so a restart needs no state), formats it on first use and mounts it at the
/// staging path; publish bind-mounts that (or, for raw block, the device node)
/// on the target. Expansion grows the file and the device online, then the
/// filesystem (xfs_growfs, resize2fs). Staging and target paths must lie below
/// the kubelet dir, and a mount there is touched only when mountinfo shows it
/// comes from the volume (its loop device, or its device node). Helpers (mkfs,
/// blkid, cp, ...) run with the timeout; mounts are mount(2)/umount2(2).
/// Mutable parameters (readAheadKB, directIO: detail/block_parameters.hpp) are
/// set on the loop device: at once by modify while it is attached, and by every
/// stage from the record. With a cooldown, modify refuses a second modification
/// of a volume within the interval (ec::resource_exhausted).
/// A Docker volume (`-o backend=block -o size=`, record owner docker: block_docker.cpp)
/// is formatted at create, mounted at BLOCK/mounts/NAME by the first Mount and detached
/// at the last Unmount; resize grows its filesystem online while it is mounted.
/// Safe to call from several threads at once (for different volumes): its only
/// mutable state is the cooldown's bookkeeping, which has a lock of its own.
class block_backend : public backend {
public:
  /// Granularity of capacities.
  static constexpr uint64_t unit_bytes = uint64_t{1} << 20;
  /// Size when CreateVolume names none.
  static constexpr uint64_t default_bytes = uint64_t{1} << 30;
  /// Smallest image mkfs.xfs (xfsprogs 6.1) accepts: it refuses 299 MiB.
  static constexpr uint64_t min_xfs_bytes = uint64_t{300} << 20;
  /// Smallest ext4 volume berth provisions.
  static constexpr uint64_t min_ext4_bytes = uint64_t{16} << 20;

  /// @param state_dir the state root; images go to STATE/block/ unless `space` says otherwise.
  /// @param helper_timeout after this a helper (mkfs, cp, ...) is killed (ec::timeout).
  /// @param space where images live and the journal reserve they share a filesystem with.
  /// @param kubelet_dir staging and target paths must lie below it (node_path.hpp).
  /// @param cooldown the least time between two modifications of one volume (none by default).
  /// @param loop where each loop device attached is counted (may be null).
  explicit block_backend(std::string state_dir,
                         std::chrono::milliseconds helper_timeout = std::chrono::seconds(120),
                         block_space space = {}, std::string kubelet_dir = default_kubelet_dir,
                         cooldown_config cooldown = {}, std::shared_ptr<loop_stats> loop = nullptr);

  // -- backend ---------------------------------------------------------------
  std::string name() const override;
  /// CSI's parameters (fsType, backend, csi.storage.k8s.io/*).
  caf::error validate(const std::string& volume, const option_map& options) const override;
  /// Docker's options: backend=block, size (required), fstype (ext4 or xfs), uid, gid, mode.
  caf::expected<uint64_t> validate_docker(const std::string& volume,
                                          const option_map& options) const override;
  caf::error create(const volume_record& rec) override;
  /// A Docker volume: attaches its image and mounts its filesystem at mountpoint(rec).
  caf::expected<std::string> mount(const volume_record& rec) override;
  /// A Docker volume: unmounts its filesystem at mountpoint(rec), then detaches the
  /// device unless something else still mounts it.
  caf::error unmount(const volume_record& rec, bool lazy) override;
  caf::error remove(const volume_record& rec) override;
  /// BLOCK/mounts/NAME for a Docker volume; "" for CSI's, which are staged instead.
  std::string mountpoint(const volume_record& rec) const override;

  // -- CSI -------------------------------------------------------------------
  /// Snapshots and clones are sparse copies of the image.
  bool copies_content() const override;
  /// A snapshot, or a volume with a content source: a copy of its source's image, made
  /// while the source's filesystem is frozen (consistent), or while a raw block volume's
  /// writers go on (crash-consistent).
  caf::expected<std::string> create_copy(const volume_record& rec) override;
  /// A copy of the image (as a snapshot's: frozen if mounted) at BLOCK/exports/ID.img,
  /// attached and mounted at BLOCK/exports/ID (block_transfer.cpp).
  caf::expected<export_view> open_export(const volume_record& rec, const std::string& id) override;
  caf::expected<export_view> open_export_image(const volume_record& rec,
                                               const std::string& id) override;
  caf::expected<image_map> open_snapshot_image(const volume_record& rec) const override;
  /// The image copied, the delta written into the copy, the copy renamed over the image
  /// (block_delta_import.cpp).
  caf::error apply_delta(const volume_record& rec, const volume_record& base,
                         const std::string& delta) override;
  caf::error close_export(const volume_record& rec, const std::string& id) override;
  /// A new formatted image (as a Docker create makes), mounted beside `tree` (at
  /// TREE/../mnt) while `tree` is copied into it; nothing stays mounted or attached.
  caf::error create_from_tree(const volume_record& rec, const std::string& tree) override;
  caf::expected<uint64_t> choose_capacity(const volume_spec& spec) const override;
  /// A Docker volume's options are Docker's (fstype, not fsType): `bytes` rounded up to
  /// the unit. A CSI volume's: choose_capacity.
  caf::expected<uint64_t> resize_capacity(const volume_record& rec,
                                          uint64_t bytes) const override;
  /// Free bytes where images live. When the journal's reserve is on the same filesystem,
  /// the part of it not currently allocated (released on a full disk, or never made) is
  /// subtracted: that room belongs to the journal, not to new images.
  caf::expected<uint64_t> available_capacity() const override;
  caf::expected<std::string> stage(const volume_record& rec, const stage_request& req) override;
  caf::error unstage(const volume_record& rec) override;
  caf::error sweep_staging(const volume_record& rec, const std::string& path) override;
  caf::expected<bool> publish(const volume_record& rec, const std::string& target,
                              const publication& how) override;
  caf::error unpublish(const volume_record& rec, const std::string& target) override;
  /// The size step of modify: grows the image to `bytes` (rounded by choose_capacity),
  /// and the attached device while staged. Never shrinks.
  caf::error expand(const volume_record& rec, uint64_t bytes);
  /// readAheadKB and directIO; fsType and the other creation parameters are fixed.
  caf::error validate_mutable(const std::string& volume,
                              const option_map& parameters) const override;
  /// expand (and grow_filesystem while a filesystem is staged) for m.bytes, then
  /// the parameters on the attached device; those are applied first and put back
  /// when the size fails, so a failed modify leaves them as they were. The cooldown
  /// counts from every successful modify; one that asks for nothing the volume does
  /// not already have (a retry) is not refused by it.
  caf::error modify(const volume_record& rec, const modification& m) override;
  caf::expected<uint64_t> grow_filesystem(const volume_record& rec) override;
  caf::expected<volume_stats> stats(const volume_record& rec, const std::string& path) override;

  // -- paths -----------------------------------------------------------------

  /// BLOCK/volumes/NAME.img or BLOCK/snapshots/NAME.img by
  /// `kind`; "" for an invalid name or kind.
  std::string image_path(record_kind kind, const std::string& name) const;
  /// image_path(rec.kind, rec.name).
  std::string image_path(const volume_record& rec) const;
  /// BLOCK/volumes and BLOCK/snapshots: every image berth makes lies in one of
  /// them (resolved, as /sys shows a loop device's backing file).
  std::vector<std::string> image_dirs() const;
  /// BLOCK/exports: the exports' copies and their mounts, none of which a record holds.
  std::string exports_dir() const;
  /// Export `id`'s copy of rec's image at BLOCK/exports/ID.img, made as a snapshot's is,
  /// neither attached nor mounted: its path and consistency. `what` names it in errors.
  caf::expected<export_view> copy_for_export(const volume_record& rec, const std::string& id,
                                             const std::string& what);
  /// Whether rec's image is attached with direct I/O: unless its directIO is false.
  bool attaches_with_direct_io(const volume_record& rec) const;

  /// What the host holds of a volume's image: the bytes it takes, and whether the loop
  /// device backing it (found in `attached`, index_loop_devices()) uses direct I/O.
  struct image_state {
    uint64_t allocated_bytes = 0; ///< st_blocks * 512
    std::string device;           ///< "" when none backs it
    bool direct_io = false;
  };
  caf::expected<image_state> image_state_of(const volume_record& rec,
                                            const loop_index& attached) const;

  /// What the health sampler reads of the host once per sample, for every volume.
  struct host_view {
    loop_index loops;                          ///< index_loop_devices()
    std::map<std::string, mount_entry> mounts; ///< by mount point, the topmost mount
  };
  /// What is wrong with rec's image, loop device, mounts and filesystem, as `host` and a
  /// look at each mounted filesystem show (backends/block_health.cpp); empty: healthy.
  volume_conditions observe(const volume_record& rec, const host_view& host) const;

private:
  /// How an image is attached: direct I/O unless `parameters` say directIO=false, the block
  /// size from the image, counted in loop_.
  loop_setup attach_setup(const option_map& parameters = {}) const;
  /// ec::invalid_argument unless rec's name and kind make a valid image path.
  caf::expected<std::string> checked_image(const volume_record& rec) const;
  /// The image a content source refers to; ec::not_found when it does not
  /// exist, ec::invalid_argument when the source is empty or badly named.
  caf::expected<std::string> source_image(const content_source& source,
                                          const std::string& what) const;
  /// The filesystem type on `device` (blkid -p): "" when it holds nothing, "data" when
  /// it holds something blkid cannot name.
  caf::expected<std::string> probe_filesystem(const std::string& what, const std::string& device);
  /// Formats `device` as `fs_type` when it holds nothing; true when it did.
  caf::expected<bool> format_if_blank(const std::string& volume, const std::string& device,
                                      const std::string& fs_type);
  /// A new Docker volume's image, made ready for its first Mount: formatted, and its
  /// root given the owner and mode of its options. Leaves nothing attached or mounted.
  caf::error prepare_docker_volume(const volume_record& rec, const std::string& image);
  /// A Docker copy (from-snapshot, clone-of) larger than its source: its filesystem
  /// grown to fill the image. Leaves nothing attached or mounted.
  caf::error prepare_docker_copy(const volume_record& rec, const std::string& image);
  /// The filesystem of Docker volume `rec` on `device`: its option fstype, or for a copy,
  /// which keeps its source's, the one on the device (ext4 or xfs, else an error).
  caf::expected<std::string> docker_fs_type(const volume_record& rec, const std::string& device);
  /// Grows the xfs or ext4 filesystem mounted at `path` online to fill its device.
  caf::expected<uint64_t> grow_mounted(const volume_record& rec, const std::string& path);
  /// copy_block_image of `source`'s image to `image`, and its consistency: also
  /// copy_crash_consistent when the source was attached or mounted while it was copied
  /// (its mount count moved, or a device backs it now that did not before).
  caf::expected<std::string> copy_of(const content_source& source, const std::string& from,
                                     const std::string& image, uint64_t min_size,
                                     const std::string& what);
  /// confine_node_path against the kubelet dir, the error naming `what`.
  caf::expected<std::string> node_path(const std::string& path, const std::string& role,
                                       const std::string& what) const;

  /// What an unmount at a node path decides from: whose mount is whose.
  struct node_view {
    std::string what;   ///< "volume NAME", for logs and errors
    std::string path;   ///< the confined path
    std::string device; ///< the loop device backing the image ("" when none)
    std::vector<mount_entry> mounts; ///< mountinfo now
  };
  /// The view at `path` (a `role`: "staging path", "target") of rec's volume.
  caf::expected<node_view> view_at(const volume_record& rec, const std::string& path,
                                   const std::string& role) const;

  std::string root_;       ///< where volumes/ and snapshots/ live
  std::chrono::milliseconds helper_timeout_;
  std::string kubelet_dir_;
  std::string reserve_path_;
  uint64_t reserve_bytes_ = 0;
  /// In memory only, like a cloud provider's own record of modifications.
  modify_cooldown cooldown_;
  /// Each volume's Docker mounts and CSI stages since start, read around a copy of it.
  mount_counter mounts_;
  std::shared_ptr<loop_stats> loop_;
};

/// The "block" backend among `backends` (as berthd wires them), or nullptr: what the
/// start-up sweeps of its mounts, loop devices and images act on.
block_backend* block_backend_of(const std::map<std::string, std::shared_ptr<backend>>& backends);

} // namespace berth
