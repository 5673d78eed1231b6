#pragma once

// The BerthSnapshot custom resource (deploy/kubernetes/crds/berthsnapshots.yaml): one CSI
// snapshot, on the node that holds its source volume. The controller writes its spec and
// the node agent its status, as for a BerthVolume. Pure: JSON text in and out.

#include <cstdint>
#include <map>
#include <string>

#include <caf/expected.hpp>

#include "protocols/kube/object_api.hpp"
#include "protocols/kube/object_meta.hpp"

namespace berth::kube {

/// BerthSnapshot's collection.
resource_ref berth_snapshots();

/// What the snapshot is of (the controller writes it; immutable).
struct snapshot_object_spec {
  std::string csi_name;      ///< spec.name: the CSI snapshot name, which is its snapshot_id
  std::string source_volume; ///< spec.sourceVolume: the CSI volume id of the source
  std::string node;          ///< spec.nodeName: the source volume's node
  std::map<std::string, std::string> parameters; ///< the snapshot class's, with "backend"
};

/// What the node did (the node agent writes it).
struct snapshot_object_status {
  std::string phase; ///< "" (nothing reported yet), Ready, Failed, Deleting
  uint64_t size_bytes = 0;
  bool ready_to_use = false;
  std::string creation_time; ///< RFC 3339, when the node cut it
  int64_t observed_generation = 0;
  std::string reason; ///< berth's error code of the failure; "" on success
  std::string message;
  /// A removal's failure: the delete_request of the object it answers ("" otherwise).
  std::string delete_request;
  /// When the Ready condition (status.conditions: ready to use or not) last changed.
  std::string ready_since;
};

struct snapshot_object : object_meta {
  snapshot_object_spec spec;
  snapshot_object_status status;
};

/// A BerthSnapshot. Fails (ec::unavailable) on bad JSON or a field of the wrong type.
caf::expected<snapshot_object> parse_snapshot_object(const std::string& json);

/// The object to create: metadata.name `name`, the node label and the storage finalizer.
std::string snapshot_object_json(const std::string& name, const snapshot_object_spec& spec);

/// A merge patch of the whole status: {"status": {...}}, with the Ready condition, whose
/// lastTransitionTime stays `before`'s while the readiness does not change.
std::string snapshot_status_patch(const snapshot_object_status& status,
                                  const snapshot_object_status& before);

} // namespace berth::kube
