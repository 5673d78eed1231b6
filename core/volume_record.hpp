#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include <caf/meta/type_name.hpp>

#include "core/field_table.hpp"
#include "core/record_kind.hpp"
#include "core/record_owner.hpp"

namespace berth {

/// Driver options as Docker sends them (`-o key=value`).
using option_map = std::map<std::string, std::string>;

/// Mount ID -> how many Mounts with that ID are outstanding (docs/design.md, "One
/// count per mount ID").
using mount_counts = std::map<std::string, uint32_t>;

/// Who made one mount ID's count, and when: what lets berth release an ID
/// whose Unmount dockerd will never send.
struct mount_id_origin {
  /// The dockerd instance whose Mounts made the count, "PID@STARTTIME" (SO_PEERCRED
  /// pid and /proc/PID/stat starttime of the plugin connection's peer; see
  /// actors/release_rules.hpp dockerd_key). "" when the Mount came from something
  /// berth could not identify as dockerd (ECS, a test client, state older than
  /// origins): such an ID is never released automatically.
  std::string dockerd;
  /// Wall clock at the last counted Mount of the ID, ms since the epoch; 0 unknown.
  int64_t last_mounted_ms = 0;
};

constexpr auto fields_of(const mount_id_origin&) {
  return std::make_tuple(make_field("dockerd", &mount_id_origin::dockerd),
                         make_field("last_mounted_ms", &mount_id_origin::last_mounted_ms));
}

inline bool operator==(const mount_id_origin& a, const mount_id_origin& b) {
  return fields_equal(a, b);
}
inline bool operator!=(const mount_id_origin& a, const mount_id_origin& b) {
  return !(a == b);
}

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, mount_id_origin& x) {
  return apply_fields(x, [&](auto&... m) {
    return f(caf::meta::type_name("mount_id_origin"), m...);
  });
}

/// Mount ID -> its origin. Holds only IDs that `mounts` counts; an ID counted
/// without an entry has an unknown origin (dockerd "", last_mounted_ms 0).
using mount_id_origin_map = std::map<std::string, mount_id_origin>;

/// One CSI NodePublish of a volume at a target path.
struct publication {
  bool readonly = false;
  bool block = false;             ///< raw block: the device node is bind-mounted on a file
  std::vector<std::string> flags; ///< mount flags from the volume capability
  /// Set by the volume actor from the backend's answer, never by a request: the
  /// publish created the target (directory or file), so unpublish may delete it.
  /// A target that existed before (made by the CO, or anyone else) is never
  /// deleted. Records from before this flag load as false: the safe side, since
  /// kubelet removes the target directory itself after NodeUnpublishVolume.
  bool created = false;
  /// Published SINGLE_NODE_SINGLE_WRITER (ReadWriteOncePod): no other target may be
  /// published beside it (actors/csi_rules.hpp, check_publish).
  bool single_writer = false;
};

// One field per line, as a table.
// clang-format off
constexpr auto fields_of(const publication&) {
  return std::make_tuple(make_field("readonly", &publication::readonly),
                         make_field("block", &publication::block),
                         make_field("flags", &publication::flags),
                         make_field("created", &publication::created),
                         make_field("single_writer", &publication::single_writer,
                                    write_when::set));
}
// clang-format on

inline bool operator==(const publication& a, const publication& b) {
  return fields_equal(a, b);
}
inline bool operator!=(const publication& a, const publication& b) {
  return !(a == b);
}

/// The same access (readonly, block, flags, single writer), whoever created the target: what
/// decides whether a repeated NodePublishVolume is compatible.
bool same_access(const publication& a, const publication& b);

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, publication& x) {
  return apply_fields(x, [&](auto&... m) {
    return f(caf::meta::type_name("publication"), m...);
  });
}

/// Target path -> how the volume is published there.
using publication_map = std::map<std::string, publication>;

/// Everything berth knows about one volume; the unit of persistence. A new field is also
/// one line of its table, fields_of below, from which its equality, inspection and JSON
/// follow.
struct volume_record {
  std::string name;
  std::string backend = "local";
  option_map options;     ///< Docker driver options, or CSI parameters
  std::string created_at; ///< RFC 3339, UTC
  mount_counts mounts;
  mount_id_origin_map origins; ///< who made each ID's count (see mount_id_origin)
  bool mounted = false;   ///< the host mount exists (made at first Mount)
  std::string mountpoint; ///< where it is mounted on the host, while mounted

  // -- CSI ---------------------------------------------------------------------
  record_kind kind = record_kind::volume;
  /// Docker or CSI, set at creation; unset in a record of older state, whose owner
  /// owner_of() infers. Read the owner through owner_of() only.
  record_owner owner = record_owner::unset;
  uint64_t capacity_bytes = 0;    ///< provisioned size (block backend; 0: unbounded)
  /// For a volume, the snapshot or volume it was made from (empty: none); for a
  /// snapshot, the volume it was taken of.
  content_source source;
  std::string staging_path;       ///< NodeStageVolume path while staged, else ""
  bool staged_block = false;      ///< staged for raw block access (nothing mounted)
  std::vector<std::string> stage_flags; ///< mount flags used at stage (for remounts)
  /// fs_type of the stage's capability ("" = the volume's fsType parameter), so a
  /// re-stage (reconcile, an undone unstage) mounts the filesystem it made.
  std::string stage_fs_type;
  std::string device;             ///< the attached loop device while staged, e.g. /dev/loop3
  publication_map published;      ///< NodePublishVolume targets
  /// Mutable parameters (CSI 1.9 VolumeAttributesClass, berthctl modify), e.g.
  /// readAheadKB: set at CreateVolume and changed by ControllerModifyVolume.
  option_map mutable_parameters;
  /// Backend modifications applied to this volume (one per coalesced expand/modify).
  uint64_t modifications = 0;
  /// A copy's (a snapshot's or a clone's) consistency: "" when it holds its source as at
  /// one moment, copy_crash_consistent when it was copied while its source was in use
  /// and no moment can be vouched for (docs/running.md, "What consistent means").
  std::string consistency;
};

/// volume_record::consistency of a copy made while its source was mounted: a directory
/// copied file by file under its writers.
inline constexpr const char* copy_crash_consistent = "crash-consistent";

/// What an export reads of its copy: the files of the copy's filesystem (a tar), or the
/// copy's image itself (a block volume's delta since one of its snapshots).
enum class export_form : uint8_t { tree, image };

inline std::string to_string(export_form f) {
  return f == export_form::image ? "image" : "tree";
}

/// What an export reads: a copy of a Docker volume made for it, readable at `path` until
/// the export is closed (docs/running.md, "Export and import").
struct export_view {
  std::string path;        ///< the copy's root directory, or its image (export_form::image)
  std::string consistency; ///< as volume_record::consistency
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, export_view& x) {
  return f(caf::meta::type_name("export_view"), x.path, x.consistency);
}

/// A committed record: shared by the volume, the record directory and the persistence
/// actor, never changed in place.
using shared_record = std::shared_ptr<const volume_record>;

/// Records as a list answers them: shared, never changed in place.
using shared_records = std::vector<shared_record>;

/// `recs`, shared (a test's records, say).
shared_records share(std::vector<volume_record> recs);

/// Copies of `recs`, for a caller that keeps or changes them.
std::vector<volume_record> copies(const shared_records& recs);

/// Sum of all mount-ID counts.
uint64_t total_mounts(const volume_record& rec);

/// volume_record's fields in the order of its JSON (docs/design.md, "Durable state"). The
/// Docker fields are always written; the CSI fields only when set, so a Docker record
/// stays as small as it was before berth spoke CSI.
constexpr auto fields_of(const volume_record&) {
  using r = volume_record;
  return std::make_tuple(
    make_field("name", &r::name, write_when::always, nullptr, true),
    make_field("backend", &r::backend),
    make_field("options", &r::options, write_when::always, "option"),
    make_field("created_at", &r::created_at),
    make_field("mounts", &r::mounts, write_when::always, "mount count"),
    make_field("mount_origins", &r::origins, write_when::set, "mount origin"),
    make_field("mounted", &r::mounted),
    make_field("mountpoint", &r::mountpoint),
    make_field("owner", &r::owner, write_when::set),
    make_field("kind", &r::kind, write_when::set),
    make_field("capacity_bytes", &r::capacity_bytes, write_when::set_or_full),
    make_field("source", &r::source, write_when::set),
    make_field("staging_path", &r::staging_path, write_when::set),
    make_field("staged_block", &r::staged_block, write_when::staged),
    make_field("stage_flags", &r::stage_flags, write_when::staged),
    make_field("stage_fs_type", &r::stage_fs_type, write_when::staged_and_set),
    make_field("device", &r::device, write_when::set),
    make_field("mutable_parameters", &r::mutable_parameters, write_when::set_or_full,
               "mutable parameter"),
    make_field("modifications", &r::modifications, write_when::set_or_full),
    make_field("consistency", &r::consistency, write_when::set),
    make_field("published", &r::published, write_when::set, "publication"));
}

inline bool operator==(const volume_record& a, const volume_record& b) {
  return fields_equal(a, b);
}
inline bool operator!=(const volume_record& a, const volume_record& b) {
  return !(a == b);
}

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, volume_record& x) {
  return apply_fields(x, [&](auto&... m) {
    return f(caf::meta::type_name("volume_record"), m...);
  });
}

/// The protocol that owns `rec`: rec.owner when set, else inferred from the fields
/// a record of older state has. A record with any CSI trace (a snapshot, a backend
/// other than "local", a capacity, a content source, a staging, a device or a
/// publication) is CSI's. Anything else is Docker's: Docker only ever created on
/// "local", and a CSI volume on "local" without a capacity looks like a Docker
/// volume, but older berth could not stage or publish such a volume, so no pod can
/// have written to it. Docker volumes (the common case) stay visible to Docker.
/// The fields it reads never change over a record's life, so neither does its owner.
record_owner owner_of(const volume_record& rec);

/// True while the volume is staged or published on this node (CSI).
bool in_csi_use(const volume_record& rec);

/// Current time as RFC 3339 UTC, e.g. "2026-11-30T18:00:00Z".
std::string now_rfc3339();

} // namespace berth
