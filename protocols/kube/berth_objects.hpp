#pragma once

// berth's objects in the Kubernetes API, for its cluster mode: the BerthVolume custom
// resource (deploy/kubernetes/crds/berthvolumes.yaml), and the capacity a node reports in
// its Node's annotations. The controller writes a volume's spec and the node agent its
// status; neither writes the other's half (the status subresource keeps them apart).
// Pure: JSON text in and out (RapidJSON), no I/O.

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include <caf/expected.hpp>

#include "protocols/kube/object_api.hpp"
#include "protocols/kube/object_meta.hpp"

namespace berth::kube {

/// BerthVolume's collection, and the Nodes'.
resource_ref berth_volumes();
resource_ref nodes();
/// Events of `ns`.
resource_ref events(const std::string& ns);

/// The label each BerthVolume carries with its node (node_label_value), which the node
/// agent selects on.
inline constexpr const char* node_label = "berth.csi.dev/node";
/// The finalizer that holds a BerthVolume until its node has removed the storage.
inline constexpr const char* storage_finalizer = "berth.csi.dev/storage";
/// The annotation a DeleteVolume writes with a token of its own before it waits: a change
/// the node answers (its removal runs again), and the token the node's failure carries in
/// status.deleteRequest, so a DeleteVolume never takes an older attempt's failure for its own.
inline constexpr const char* delete_request_annotation = "berth.csi.dev/delete-request";
/// A Node's annotation capacity.berth.csi.dev/BACKEND: the bytes free there.
inline constexpr const char* capacity_annotation_prefix = "capacity.berth.csi.dev/";

/// The phases of status.phase.
inline constexpr const char* phase_ready = "Ready";
inline constexpr const char* phase_failed = "Failed";
/// The node could not remove the storage of a volume being deleted (reason and message say why).
inline constexpr const char* phase_deleting = "Deleting";

/// What the volume is (the controller writes it).
struct volume_object_spec {
  std::string csi_name; ///< spec.name: the CSI name, which is the CSI volume_id
  std::string node;     ///< spec.nodeName
  uint64_t size_bytes = 0;
  uint64_t limit_bytes = 0;
  std::map<std::string, std::string> parameters;
  std::map<std::string, std::string> mutable_parameters;
  std::string source_volume;   ///< spec.source.volume: a CSI volume name
  std::string source_snapshot; ///< spec.source.snapshot
  std::string access_type;     ///< "block" or "mount"
  std::string fs_type;
  std::vector<std::string> mount_flags;
  std::string access_mode;
};

/// What the node did (the node agent writes it).
struct volume_object_status {
  std::string phase; ///< "" (nothing reported yet), Ready, Failed
  uint64_t capacity_bytes = 0;
  std::map<std::string, std::string> applied_parameters;
  uint64_t modifications = 0;
  int64_t observed_generation = 0; ///< the generation this status answers
  /// The berth error code (core/errors.hpp's name, e.g. "out_of_range") of the last
  /// change that failed at observed_generation; "" when it succeeded.
  std::string reason;
  std::string message;
  /// A removal's failure: the delete_request of the object it answers ("" otherwise).
  std::string delete_request;
  /// When the Ready condition (status.conditions: phase Ready or not) last changed.
  std::string ready_since;
  /// When the Applied condition (what observed_generation asks was carried out, or its
  /// failure is `reason`) last changed.
  std::string applied_since;
};

struct volume_object : object_meta {
  volume_object_spec spec;
  volume_object_status status;
};

/// A BerthVolume. Fails (ec::unavailable, as for any malformed answer) on bad JSON or a
/// field of the wrong type.
caf::expected<volume_object> parse_volume_object(const std::string& json);

/// The object to create: metadata.name `name`, the node label and the storage finalizer.
std::string volume_object_json(const std::string& name, const volume_object_spec& spec);

/// A merge patch of the whole status: {"status": {...}}, with the Ready condition, whose
/// lastTransitionTime stays `before`'s while the readiness does not change.
std::string status_patch(const volume_object_status& status, const volume_object_status& before);

/// A merge patch of spec.sizeBytes and spec.mutableParameters, conditional on
/// `resource_version` (the server refuses it when the object changed since). A merge patch
/// merges maps key by key, so each key of `before` that `mutable_parameters` lacks is
/// written as null, which removes it.
std::string spec_patch(const std::string& resource_version, uint64_t size_bytes,
                       const std::map<std::string, std::string>& mutable_parameters,
                       const std::map<std::string, std::string>& before);

/// A merge patch setting the delete_request_annotation to `token`.
std::string delete_request_patch(const std::string& token);

/// A merge patch that leaves metadata.finalizers as `finalizers`, conditional on
/// `resource_version`.
std::string finalizers_patch(const std::string& resource_version,
                             const std::vector<std::string>& finalizers);

/// The object name of the CSI name `csi_name`: itself when it is a valid object name (a
/// DNS subdomain of at most 200 bytes, as external-provisioner's "pvc-UUID"), else
/// "bv-" + a lowercase prefix of it + "-" + 16 hex digits of its SHA-256. A retry of a
/// CreateVolume finds the object again by this name; spec.name tells two names apart that
/// map to one object name.
std::string object_name_for(const std::string& csi_name);

/// The node label's value for the node `node`: the name when it is a valid label value
/// (at most 63 bytes), else "h-" + 40 hex digits of its SHA-256.
std::string node_label_value(const std::string& node);

/// The capacity a Node's annotations report, by backend; a value that is not a number
/// is left out.
caf::expected<std::map<std::string, uint64_t>> parse_node_capacity(const std::string& node_json);

/// metadata.name of any object; "" when the JSON is no object or has none.
std::string object_name_of(const std::string& json);
/// metadata.resourceVersion of any object; "" when the JSON is no object or has none.
std::string resource_version_of(const std::string& json);

/// A merge patch of a Node setting capacity.berth.csi.dev/BACKEND for each entry.
std::string capacity_patch(const std::map<std::string, uint64_t>& bytes_by_backend);

/// Where an Event about a cluster-scoped object (a BerthVolume or BerthSnapshot) lives: a
/// real API server refuses a core/v1 Event without eventTime whose involved object has no
/// namespace anywhere else (docs/kubernetes-api.md, "Events").
inline constexpr const char* cluster_events_namespace = "default";

/// A core/v1 Event about berth's object `object` of kind `kind` (BerthVolume,
/// BerthSnapshot: the involvedObject, with its uid, as `kubectl describe` looks it up), of
/// `type` Normal or Warning, named `name` in cluster_events_namespace.
std::string event_json(const std::string& name, const std::string& kind, const object_meta& object,
                       const std::string& type, const std::string& reason,
                       const std::string& message, const std::string& component,
                       const std::string& now_rfc3339);

} // namespace berth::kube
