#pragma once

#include <string>

#include <caf/error.hpp>
#include <caf/expected.hpp>

#include "backends/block_ranges.hpp"
#include "core/csi_types.hpp"
#include "core/errors.hpp"
#include "core/names.hpp"
#include "core/volume_record.hpp"

namespace berth {

/// One backend modify call: what the coalescing mailbox merged for one volume.
struct modification {
  uint64_t bytes = 0;    ///< the new size, rounded by choose_capacity (0: unchanged)
  option_map parameters; ///< mutable parameters to set (validated by validate_mutable)
};

/// The storage side of a volume. Plain blocking calls, no actors inside: the
/// volume actor runs them on the executor, never on an actor thread.
/// Every call is idempotent, and every error names the bad input.
class backend {
public:
  virtual ~backend() = default;

  /// The name volumes refer to in volume_record::backend, e.g. "local".
  virtual std::string name() const = 0;

  /// Checks options against the allow-list; no side effects.
  virtual caf::error validate(const std::string& volume, const option_map& options) const = 0;

  /// Docker Create: checks its `-o` options against the allow-list, with no side
  /// effects, and returns the capacity the volume gets in bytes (0: none, as a
  /// directory has). By default, validate()'s check and no capacity.
  virtual caf::expected<uint64_t> validate_docker(const std::string& volume,
                                                  const option_map& options) const {
    if (auto err = validate(volume, options)) {
      return err;
    }
    return uint64_t{0};
  }

  /// Prepares storage for a new volume (a directory under the state root).
  virtual caf::error create(const volume_record& rec) = 0;

  /// Mounts the volume on the host; returns the mountpoint. Already mounted is success.
  virtual caf::expected<std::string> mount(const volume_record& rec) = 0;

  /// Unmounts the volume. "Not mounted" counts as success. With `lazy` the
  /// mount is detached (MNT_DETACH), which never waits for a dead server.
  virtual caf::error unmount(const volume_record& rec, bool lazy) = 0;

  /// Deletes the volume's storage. The caller has unmounted it.
  virtual caf::error remove(const volume_record& rec) = 0;

  /// Where the volume is (or would be) mounted on the host.
  virtual std::string mountpoint(const volume_record& rec) const = 0;

  // -- CSI (a backend that does not serve CSI keeps these defaults) -------------

  /// Rounds and checks a CreateVolume's capacity (required/limit in `spec`, 0 = unset)
  /// against the backend's unit and minimum. Returns the size to provision;
  /// ec::out_of_range naming the sizes when none fits.
  virtual caf::expected<uint64_t> choose_capacity(const volume_spec& spec) const {
    return spec.required_bytes;
  }

  /// The size a resize of `rec` to at least `bytes` provisions (berthctl resize,
  /// ControllerExpandVolume): by default choose_capacity of a spec of rec's options.
  virtual caf::expected<uint64_t> resize_capacity(const volume_record& rec, uint64_t bytes) const {
    volume_spec want;
    want.backend = rec.backend;
    want.parameters = rec.options;
    want.required_bytes = bytes;
    return choose_capacity(want);
  }

  /// True when create() can copy a content source (a snapshot, or a volume made
  /// from a snapshot or another volume); false makes such requests fail up front.
  virtual bool copies_content() const {
    return false;
  }

  /// Whether `source`, a record of this backend, can be copied (a snapshot taken of it,
  /// or a volume cloned from it); ec::unsupported naming it and what to use instead when
  /// not. Asked before the copy's record is made. By default any can.
  virtual caf::error check_copy_source(const volume_record& source) const {
    (void)source;
    return {};
  }

  /// create() of a snapshot or of a volume with a content source: makes the copy and
  /// returns its volume_record::consistency ("" or copy_crash_consistent). By default
  /// create(), whose copies are consistent.
  virtual caf::expected<std::string> create_copy(const volume_record& rec) {
    if (auto err = create(rec)) {
      return err;
    }
    return std::string{};
  }

  // -- export and import of Docker volumes (docs/running.md, "Export and import") ---------

  /// A copy of volume `rec` made for the export `id` (a name of berth's, a valid volume
  /// name), readable at the view's path until close_export(), and how consistent it is.
  /// Nothing of it is recorded: a crash leaves it to the start-up sweep.
  virtual caf::expected<export_view> open_export(const volume_record& rec, const std::string& id) {
    (void)rec, (void)id;
    return unsupported("export");
  }

  /// A copy of block volume `rec`'s image made for export `id` as open_export makes it,
  /// neither attached nor mounted: where the image is, and its consistency.
  virtual caf::expected<export_view> open_export_image(const volume_record& rec,
                                                       const std::string& id) {
    (void)rec, (void)id;
    return unsupported("an export of changed blocks");
  }

  /// Unmounts and deletes export `id`'s copy of `rec`; one already gone is success.
  virtual caf::error close_export(const volume_record& rec, const std::string& id) {
    (void)rec, (void)id;
    return unsupported("export");
  }

  /// create() of a Docker volume whose content is the directory `tree` (an import's
  /// staging directory, which this may move away): the volume holds `tree`'s files,
  /// owners and modes, and its root the owner and mode its options ask for, if any.
  virtual caf::error create_from_tree(const volume_record& rec, const std::string& tree) {
    (void)rec, (void)tree;
    return unsupported("import");
  }

  /// berthctl import --onto: applies the delta at `delta` (block_delta.hpp, spooled whole
  /// and checked) to volume `rec`, which must hold exactly the bytes of `base`, the snapshot
  /// the delta is since, and which nothing may use. All or nothing: a refusal, a failure or
  /// a crash leaves the volume as it was.
  virtual caf::error apply_delta(const volume_record& rec, const volume_record& base,
                                 const std::string& delta) {
    (void)rec, (void)base, (void)delta;
    return unsupported("an import of changed blocks");
  }

  /// The image of snapshot `rec`, opened for its block map (changed block tracking,
  /// block_ranges.hpp). A plain read of a file that never changes: safe on any thread.
  virtual caf::expected<image_map> open_snapshot_image(const volume_record& rec) const {
    (void)rec;
    return unsupported("changed block tracking");
  }

  /// Bytes a new volume could still get (CSI GetCapacity).
  virtual caf::expected<uint64_t> available_capacity() const {
    return unsupported("GetCapacity");
  }

  // Node paths: a backend that stages or publishes refuses (ec::invalid_argument)
  // a staging or target path outside its kubelet directory (node_path.hpp), and
  // acts on a mount only when mountinfo shows it comes from this volume.

  /// NodeStageVolume. `rec` is the committed record (capacity, options["fsType"]).
  /// Attaches the storage, applies rec.mutable_parameters to it, formats it on first
  /// use only, and mounts it at req.staging_path (for req.block: attaches only). A
  /// parameter that cannot be applied fails the stage. Returns the device path
  /// ("" when there is none). This volume already mounted there is success; any
  /// other mount there is ec::failed_precondition.
  virtual caf::expected<std::string> stage(const volume_record& rec, const stage_request& req) {
    (void)rec, (void)req;
    return unsupported("NodeStageVolume");
  }

  /// NodeUnstageVolume of the staging `rec` holds: unmounts this volume's mounts
  /// at rec.staging_path and detaches its device. A foreign mount on top of one of
  /// them is ec::failed_precondition (nothing is unmounted). Not staged is success.
  virtual caf::error unstage(const volume_record& rec) {
    (void)rec;
    return unsupported("NodeUnstageVolume");
  }

  /// NodeUnstageVolume at `path`, where `rec` does not stage the volume: cleans
  /// what a crash between a stage and its commit leaves. Unmounts the mounts at
  /// `path` that come from this volume; detaches its device only when `rec`
  /// stages it nowhere (a staging elsewhere still uses it). Anything else at
  /// `path` is left alone, and that is success.
  virtual caf::error sweep_staging(const volume_record& rec, const std::string& path) {
    (void)rec, (void)path;
    return unsupported("NodeUnstageVolume");
  }

  /// NodePublishVolume: bind-mounts the staged volume (or for how.block its device
  /// node) at `target`, creating the directory or file when it is missing.
  /// Returns true when it created the target (the record keeps that, so unpublish
  /// deletes only what berth made). This volume already mounted there the same
  /// way is success (false); the other way (ro/rw, block/mount) is
  /// ec::already_exists; a mount of anything else is ec::failed_precondition.
  virtual caf::expected<bool> publish(const volume_record& rec, const std::string& target,
                                      const publication& how) {
    (void)rec, (void)target, (void)how;
    return unsupported("NodePublishVolume");
  }

  /// NodeUnpublishVolume: unmounts this volume's mounts at `target`, then deletes
  /// the target only when rec.published[target].created. A foreign mount at
  /// `target` is left alone: ec::failed_precondition while one of this volume's
  /// is under it, success otherwise. Also called for a target the record lacks
  /// (a crash between a publish and its commit): then nothing is deleted.
  /// Not published is success.
  virtual caf::error unpublish(const volume_record& rec, const std::string& target) {
    (void)rec, (void)target;
    return unsupported("NodeUnpublishVolume");
  }

  /// Checks mutable parameters (CreateVolume's mutable_parameters, ControllerModifyVolume,
  /// berthctl modify) with no side effects: an unknown key, a key that is fixed at
  /// creation, or a bad value is ec::invalid_argument naming it.
  virtual caf::error validate_mutable(const std::string& volume, const option_map& parameters) const {
    if (parameters.empty()) {
      return {};
    }
    return make_error(ec::invalid_argument, "backend " + name() + " has no mutable parameters; "
                                              "volume " + volume + " cannot take \""
                                              + parameters.begin()->first + "\"");
  }

  /// Applies a size and mutable parameters in one call (the coalesced result of
  /// ControllerExpandVolume and ControllerModifyVolume). Grows the storage, and the
  /// attached device and its filesystem while staged; applies each parameter where
  /// the volume is attached, and `rec` plus `m` is what a later stage applies. A
  /// backend with a minimum interval between modifications refuses an early one
  /// with ec::resource_exhausted saying when the volume may be modified again.
  virtual caf::error modify(const volume_record& rec, const modification& m) {
    (void)rec, (void)m;
    return unsupported("ControllerModifyVolume");
  }

  /// NodeExpandVolume: grows the filesystem mounted at rec.staging_path to fill the
  /// device (xfs_growfs, resize2fs). Returns the new size in bytes.
  virtual caf::expected<uint64_t> grow_filesystem(const volume_record& rec) {
    (void)rec;
    return unsupported("NodeExpandVolume");
  }

  /// NodeGetVolumeStats at `path` (the staging path or a published target).
  virtual caf::expected<volume_stats> stats(const volume_record& rec, const std::string& path) {
    (void)rec, (void)path;
    return unsupported("NodeGetVolumeStats");
  }

protected:
  caf::error unsupported(const std::string& what) const {
    return make_error(ec::unsupported, what + " is not supported by backend " + name());
  }

  /// An export's id (open_export, close_export) is a name of berth's, never a path:
  /// ec::invalid_argument naming it, for `what`, unless it is a valid volume name.
  static caf::error check_export_id(const std::string& what, const std::string& id) {
    if (!is_valid_volume_name(id)) {
      return make_error(ec::invalid_argument, what + ": invalid export id \"" + id + "\"");
    }
    return {};
  }
};

} // namespace berth
