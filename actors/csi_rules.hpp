#pragma once

// The CSI transition rules of one volume as plain functions on plain records,
// unit-tested without actors. Each check answers whether a request may run,
// is already done (idempotent success), or is refused with the spec's error.

#include <cstdint>
#include <string>

#include <caf/error.hpp>
#include <caf/expected.hpp>

#include "core/csi_types.hpp"
#include "core/staging.hpp"
#include "core/volume_record.hpp"

namespace berth {

/// What a CSI request needs after its check.
enum class csi_action {
  run,  ///< do the side effect, then persist
  done, ///< already in the requested state: succeed without side effect
  /// unstage and unpublish: the record lacks the path, but the host may hold this
  /// volume's own leftover there (a stage or publish that landed late); the backend
  /// sweeps it, and the record is not touched
  sweep,
};

/// CreateVolume/CreateSnapshot on an existing record: empty when `spec` asks for
/// what `rec` is (same kind and source; for a volume also the same backend and
/// parameters and a capacity within the range); ec::already_exists naming the
/// difference otherwise. Mutable parameters may differ (they are not the volume's
/// identity: ControllerModifyVolume changes them); the record keeps its own.
caf::error check_csi_recreate(const volume_record& rec, const volume_spec& spec);

/// The size to ask the backend for: the request, raised to the source's size when
/// unset; ec::out_of_range when the request is smaller than its source.
caf::expected<volume_spec> with_source_size(volume_spec spec);

/// The record a CreateVolume/CreateSnapshot commits (with the spec's mutable parameters).
volume_record make_csi_record(const std::string& name, const volume_spec& spec,
                              uint64_t capacity);

/// NodeStageVolume: `done` when staged at the same path the same way; refused with
/// ec::already_exists when staged there differently (block or mount, flags, an
/// fs_type other than the recorded one), ec::failed_precondition when staged at
/// another path.
caf::expected<csi_action> check_stage(const volume_record& rec, const stage_request& req);

/// Marks `next` staged per `req` on `device` (also the fs_type asked for).
void set_staged(volume_record& next, const stage_request& req, const std::string& device);

/// NodeUnstageVolume: when not staged at `path`, `sweep` for a volume and `done` for a
/// snapshot (never staged); ec::failed_precondition
/// while a target is still published (unstaging would pull the mount from under it).
caf::expected<csi_action> check_unstage(const volume_record& rec, const std::string& path);

/// NodePublishVolume: ec::failed_precondition unless staged at req.staging_path
/// (and staged for block when req asks block); `done` when published at the
/// target the same way; ec::already_exists when published there differently;
/// ec::failed_precondition for a new target beside a single writer's, or for a single
/// writer's beside another; ec::resource_exhausted for a new target when
/// limits::max_targets are published.
caf::expected<csi_action> check_publish(const volume_record& rec, const publish_request& req);

/// NodeUnpublishVolume: `run` when the record publishes `target`; otherwise `sweep`
/// for a volume, `done` for a snapshot (never published).
csi_action check_unpublish(const volume_record& rec, const std::string& target);

/// NodeExpandVolume / NodeGetVolumeStats at `path`: ec::not_found unless `path` is
/// the staging path or a published target.
caf::error check_volume_path(const volume_record& rec, const std::string& path);

} // namespace berth
