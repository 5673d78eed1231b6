#pragma once

// The vocabulary of berth: every typed actor interface in one place.
//
//   protocols/docker ─┬─ Mount, Unmount (volume_handles) ─┐
//   protocols/csi    ─┤                                    ▼
//   protocols/admin  ─┴─▶ registry_actor ──delegate──▶ volume_actor (one per volume)
//                                                          │        │
//                                       persistence_actor ◀┘        ▼ backend on the executor

#include <cstdint>
#include <string>
#include <vector>

#include <caf/typed_actor.hpp>
#include <caf/replies_to.hpp>

#include "actors/direct_reply.hpp"
#include "actors/type_ids.hpp"
#include "core/caller.hpp"

namespace berth {

using caf::reacts_to;
using caf::replies_to;

/// Durable state: a reply means the record is on disk (fsync'd).
using persistence_actor = caf::typed_actor<
  /// Stores the whole record of one volume, keeping the pointer (no copy).
  replies_to<atom::put, shared_record>::with<atom::ok>,
  /// Forgets a volume.
  replies_to<atom::erase, std::string>::with<atom::ok>,
  /// Answers once everything sent before is durable (used at shutdown).
  replies_to<atom::flush>::with<atom::ok>,
  /// Internal: writes and fsyncs every pending record at once (group commit).
  reacts_to<atom::commit>,
  /// Internal: the snapshot of this generation was written off the commit path (or the
  /// error why not).
  reacts_to<atom::compacted, uint64_t, caf::error>>;

/// One volume: serializes its own transitions (docs/design.md, "The volume actor").
using volume_actor = caf::typed_actor<
  /// Creates the volume (idempotent with equal options). With -o from-snapshot or
  /// clone-of, the size of that source, which the registry read (else 0).
  replies_to<atom::create, option_map, uint64_t>::with<atom::ok>,
  /// berthctl import: creates the volume with the content of the staging directory
  /// (backend create_from_tree); the name must be free.
  replies_to<atom::create, option_map, uint64_t, std::string>::with<atom::ok>,
  /// berthctl export: a copy of this Docker volume made for the export of this id, and
  /// where to read it in that form (backend open_export, open_export_image); nothing is
  /// recorded.
  replies_to<atom::export_open, std::string, export_form>::with<export_view>,
  /// The export of this id has been read: its copy goes (backend close_export).
  replies_to<atom::export_close, std::string>::with<atom::ok>,
  /// berthctl import --onto: the delta spooled at this path, since this base snapshot, is
  /// applied to this Docker block volume, refused while anything uses it (backend
  /// apply_delta); the record does not change.
  replies_to<atom::import_delta, std::string, volume_record>::with<atom::ok>,
  /// Counts one Mount for a mount ID from a dockerd instance (its dockerd_key, ""
  /// when not a dockerd berth identified), recording the ID's origin; mounts on the
  /// host at the first. A Mount from another dockerd than the one that made the ID's
  /// counts replaces them (release_rules count_mount). Returns the mountpoint. Not
  /// started when the caller has gone by its turn.
  replies_to<atom::mount, std::string, std::string, caller>::with<std::string>,
  /// Uncounts one Mount for a mount ID; unmounts at the last.
  replies_to<atom::unmount, std::string>::with<atom::ok>,
  /// The Mount and Unmount above, sent straight from an adapter's thread: the volume
  /// answers through the direct_reply instead of to a sender (docs/design.md, "Three
  /// hops").
  reacts_to<atom::mount, std::string, std::string, caller, direct_reply<std::string>>,
  reacts_to<atom::unmount, std::string, direct_reply<atom::ok>>,
  /// Drops the whole count of one mount ID dockerd forgot, decided again at its turn on
  /// the committed record: an ID not counted is 0 when automatic (if_unchanged), else
  /// ec::not_found; an automatic release whose origin changed since (a Mount came) is
  /// 0. Unmounts the host when it was the last ID. Docker records only. Returns the
  /// count dropped.
  replies_to<atom::release, mount_release>::with<uint32_t>,
  /// Removes the volume when its record belongs to this owner (Docker or CSI) and is
  /// of this kind (a volume or a snapshot); another owner's
  /// or kind's record is ec::not_found (Docker Remove, CSI Delete{Volume,Snapshot}).
  /// Refused while mounted by any ID, staged or published.
  replies_to<atom::remove, record_owner, record_kind>::with<atom::ok>,
  /// CSI CreateVolume/CreateSnapshot: creates, or returns the existing compatible
  /// record (idempotent); ec::already_exists when incompatible.
  replies_to<atom::create, volume_spec>::with<volume_record>,
  /// NodeStageVolume (idempotent at the same path).
  replies_to<atom::stage, stage_request>::with<atom::ok>,
  /// NodeUnstageVolume at a staging path; refused while published.
  replies_to<atom::unstage, std::string>::with<atom::ok>,
  /// NodePublishVolume (idempotent for the same target and capability).
  replies_to<atom::publish, publish_request>::with<atom::ok>,
  /// NodeUnpublishVolume of a target path.
  replies_to<atom::unpublish, std::string>::with<atom::ok>,
  /// The publish and unpublish above, sent straight from a gRPC thread, answered through
  /// the direct_reply (docs/design.md, "Three hops").
  reacts_to<atom::publish, publish_request, direct_reply<atom::ok>>,
  reacts_to<atom::unpublish, std::string, direct_reply<atom::ok>>,
  /// ControllerExpandVolume, ControllerModifyVolume, berthctl resize/modify: a size
  /// and/or mutable parameters, merged with the others of the coalescing window into
  /// one backend call; returns the record.
  replies_to<atom::modify, modify_request>::with<volume_record>,
  /// NodeExpandVolume: grows the filesystem; returns the capacity.
  replies_to<atom::grow, std::string>::with<uint64_t>,
  /// NodeGetVolumeStats at a staging path or published target.
  replies_to<atom::stats, std::string>::with<volume_stats>,
  /// NodeStageVolume, NodeUnstageVolume, NodeExpandVolume and NodeGetVolumeStats above,
  /// sent straight from a gRPC thread, answered through the direct_reply (docs/design.md,
  /// "Three hops").
  reacts_to<atom::stage, stage_request, direct_reply<atom::ok>>,
  reacts_to<atom::unstage, std::string, direct_reply<atom::ok>>,
  reacts_to<atom::grow, std::string, direct_reply<uint64_t>>,
  reacts_to<atom::stats, std::string, direct_reply<volume_stats>>,
  /// The current record.
  replies_to<atom::get>::with<volume_record>,
  /// The current record if this owner's (Docker or CSI), else ec::not_found.
  replies_to<atom::get, record_owner>::with<volume_record>,
  /// Answers when no transition is running or queued (used at shutdown).
  replies_to<atom::drain>::with<atom::ok>,
  /// Answers when no backend call is hung and then none is running or queued: the
  /// registry waits for it before it retires the actor of a name it forgets.
  replies_to<atom::settled>::with<atom::ok>,
  /// Internal: a backend call finished (token, error or none; a result travels beside it).
  reacts_to<atom::done, uint64_t, caf::error>,
  /// Internal: the timer of the current backend call's timeout fired.
  reacts_to<atom::deadline>,
  /// Internal: the coalescing window with this number closes.
  reacts_to<atom::close_window, uint64_t>,
  /// The registry forgot this volume: answer what is queued, then quit.
  reacts_to<atom::retire>>;

/// Names to volumes; serializes creation and removal of names. Docker and CSI are
/// separate namespaces (docs/design.md, "Only what berth owns"): Docker's messages
/// (create with options, mount, unmount) act only on Docker's records, CSI's (create
/// with a spec, stage, ...) only on CSI's, and the owner-scoped get, list and remove
/// below are what the adapters send. The unscoped get and list are the admin API's,
/// which sees all.
using registry_actor = caf::typed_actor<
  replies_to<atom::create, std::string, option_map>::with<atom::ok>,
  /// The Docker Create above, the Remove and the CSI create below, sent straight from an
  /// adapter's thread: the registry answers through the direct_reply, with no actor
  /// between it and the adapter (docs/design.md, "Three hops").
  reacts_to<atom::create, std::string, option_map, direct_reply<atom::ok>>,
  reacts_to<atom::remove, std::string, record_owner, record_kind, direct_reply<atom::ok>>,
  reacts_to<atom::create, std::string, volume_spec, direct_reply<volume_record>>,
  /// berthctl import, before it reads the tar: whether a Docker volume `name` with these
  /// options could be created (the name free, the options valid, no copy). Changes nothing.
  replies_to<atom::import_check, std::string, option_map>::with<atom::ok>,
  /// berthctl import, once the tar is extracted to the staging directory: creates Docker
  /// volume `name` holding it (the same checks first).
  replies_to<atom::create, std::string, option_map, std::string>::with<atom::ok>,
  /// berthctl export of Docker volume `name` as `id`: the volume's export_open above. Until
  /// export_close, the volume counts as being copied, so it cannot be removed.
  replies_to<atom::export_open, std::string, std::string, export_form>::with<export_view>,
  replies_to<atom::export_close, std::string, std::string>::with<atom::ok>,
  /// berthctl import --onto Docker volume `name`: the volume's import_delta above.
  replies_to<atom::import_delta, std::string, std::string, volume_record>::with<atom::ok>,
  /// Docker Mount of (name, mount ID, dockerd key, caller): the volume's mount above.
  replies_to<atom::mount, std::string, std::string, std::string, caller>::with<std::string>,
  replies_to<atom::unmount, std::string, std::string>::with<atom::ok>,
  /// The volume's release above, by name (another owner's record is not_found).
  replies_to<atom::release, std::string, mount_release>::with<uint32_t>,
  /// Removes `name` if it is a record of `owner` and `kind` (one message: no race
  /// with a re-creation as another kind).
  replies_to<atom::remove, std::string, record_owner, record_kind>::with<atom::ok>,
  /// Any record (admin API).
  replies_to<atom::get, std::string>::with<volume_record>,
  /// `name`'s record if it is `owner`'s, else ec::not_found.
  replies_to<atom::get, std::string, record_owner>::with<volume_record>,
  /// CSI: the volume actor's handlers above, by name.
  replies_to<atom::create, std::string, volume_spec>::with<volume_record>,
  replies_to<atom::stage, std::string, stage_request>::with<atom::ok>,
  replies_to<atom::unstage, std::string, std::string>::with<atom::ok>,
  replies_to<atom::publish, std::string, publish_request>::with<atom::ok>,
  replies_to<atom::unpublish, std::string, std::string>::with<atom::ok>,
  /// ControllerExpandVolume (a size), ControllerModifyVolume (mutable parameters):
  /// both are a modify, so the volume's mailbox can merge them.
  replies_to<atom::modify, std::string, modify_request>::with<volume_record>,
  replies_to<atom::grow, std::string, std::string>::with<uint64_t>,
  replies_to<atom::stats, std::string, std::string>::with<volume_stats>,
  /// Every record, sorted by name (admin API).
  replies_to<atom::list>::with<shared_records>,
  /// The records of one owner (Docker or CSI), sorted by name.
  replies_to<atom::list, record_owner>::with<shared_records>,
  /// Waits until every volume is idle (graceful stop).
  replies_to<atom::drain>::with<atom::ok>,
  /// Answers at once: the registry is alive and reads its mailbox (/healthz).
  replies_to<atom::ping>::with<atom::ok>>;

} // namespace berth
