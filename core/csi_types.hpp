#pragma once

// The plain structs CSI requests travel in between the adapter, the actors and
// the backends. Protocol-neutral: no protobuf types here.

#include <cstdint>
#include <string>
#include <vector>

#include <caf/meta/type_name.hpp>

#include "core/caller.hpp"
#include "core/volume_record.hpp"

namespace berth {

/// A CSI CreateVolume or CreateSnapshot, after the adapter validated it.
struct volume_spec {
  record_kind kind = record_kind::volume;
  std::string backend;            ///< "block" or "local"
  option_map parameters;          ///< StorageClass parameters (fsType, ...)
  uint64_t required_bytes = 0;    ///< capacity_range.required_bytes (0: any)
  uint64_t limit_bytes = 0;       ///< capacity_range.limit_bytes (0: none)
  content_source source;          ///< what to copy from (empty: nothing)
  uint64_t source_bytes = 0;      ///< the source's size; filled in by the registry
  /// CSI 1.9 mutable_parameters: the volume starts with them (backend::validate_mutable).
  option_map mutable_parameters;
  /// The namespace the new record joins: CSI's, or Docker's for `berthctl snapshot create`.
  record_owner owner = record_owner::csi;
  caller from{};                  ///< who waits (not inspected: it never leaves the process)
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, volume_spec& x) {
  return f(caf::meta::type_name("volume_spec"), x.kind, x.backend, x.parameters,
           x.required_bytes, x.limit_bytes, x.source, x.source_bytes, x.mutable_parameters,
           x.owner);
}

/// NodeStageVolume: attach, format on first use, mount at `staging_path`.
struct stage_request {
  std::string staging_path;
  bool block = false;             ///< raw block access: attach only, mount nothing
  std::string fs_type;            ///< from the capability, or "" for the volume's fsType
  std::vector<std::string> flags; ///< mount flags from the capability
  caller from{};                  ///< who waits (not inspected: it never leaves the process)
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, stage_request& x) {
  return f(caf::meta::type_name("stage_request"), x.staging_path, x.block, x.fs_type, x.flags);
}

/// NodePublishVolume: bind the staged volume (or its device) to `target`.
struct publish_request {
  std::string target;
  std::string staging_path; ///< must be where the volume is staged
  publication how;
  caller from{}; ///< who waits (not inspected: it never leaves the process)
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, publish_request& x) {
  return f(caf::meta::type_name("publish_request"), x.target, x.staging_path, x.how);
}

/// A change to a volume: ControllerExpandVolume (a size), ControllerModifyVolume
/// (mutable parameters), or berthctl resize/modify. The volume's coalescing mailbox
/// merges the ones that arrive within its window into one backend modify call.
struct modify_request {
  uint64_t required_bytes = 0; ///< grow to at least this (0: the size does not change)
  option_map parameters;       ///< mutable parameters to set (backend::validate_mutable)
  /// The namespace asking (CSI); unset for the admin API, which may modify any record.
  record_owner owner = record_owner::unset;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, modify_request& x) {
  return f(caf::meta::type_name("modify_request"), x.required_bytes, x.parameters, x.owner);
}

/// NodeGetVolumeStats.
struct volume_stats {
  uint64_t total_bytes = 0;
  uint64_t available_bytes = 0;
  uint64_t used_bytes = 0;
  uint64_t total_inodes = 0;
  uint64_t free_inodes = 0;
  uint64_t used_inodes = 0;
  bool block = false;    ///< raw block: only total_bytes is meaningful
  bool abnormal = false; ///< VOLUME_CONDITION: the mount or device is gone
  std::string message;   ///< why abnormal
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, volume_stats& x) {
  return f(caf::meta::type_name("volume_stats"), x.total_bytes, x.available_bytes,
           x.used_bytes, x.total_inodes, x.free_inodes, x.used_inodes, x.block, x.abnormal,
           x.message);
}

} // namespace berth
