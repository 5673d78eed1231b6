#pragma once

// Pure functions between CSI protobuf messages and berth's structs: request
// validation, capability checks, volume/snapshot encoding, pagination and
// topology. No actors, no I/O; unit-tested in tests/protocols/csi_codec_test.cpp.
// Every refusal is a grpc::Status whose message names the bad field and value.

#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include <grpcpp/support/status.h>

#include "core/csi_types.hpp"
#include "core/telemetry/volume_health.hpp"
#include "core/volume_record.hpp"
#include "csi.pb.h"

namespace berth::csi {

namespace v1 = ::csi::v1;

/// What the codec needs to know about this node and its backends.
struct codec_env {
  std::string driver_name = "berth.csi.dev";
  std::string node_id;
  std::string default_backend = "block";
  std::set<std::string> backends; ///< configured backend names
};

// -- fields ---------------------------------------------------------------------

/// The topology segment key, "topology.<driver>/node".
std::string topology_key(const std::string& driver_name);

/// `value` of the required field `field` is non-empty.
grpc::Status require(const std::string& value, const char* field);

/// A path from the CO (staging/target/volume path): required, absolute and
/// normalized (no "." or ".." component, no "//", no trailing "/", no NUL or
/// control character, at most limits::max_path_bytes).
grpc::Status check_path(const std::string& path, const char* field);

/// A parameter map `field` (CreateVolume/CreateSnapshot parameters): at most
/// limits::max_options entries besides `backend` and the CO's own
/// ("csi.storage.k8s.io/..."), which the record does not keep among its parameters;
/// every key non-empty and at most limits::max_option_key_bytes, every value at most
/// limits::max_option_value_bytes. Each refusal names the field, the key and the bound.
grpc::Status check_parameters(const google::protobuf::Map<std::string, std::string>& params,
                              const char* field);

/// A mutable_parameters map `field` (CreateVolume, ControllerModifyVolume): the
/// bounds of check_parameters, but every entry counts toward limits::max_options
/// (the record keeps all of them: no key is the CO's or names the backend).
grpc::Status check_mutable_parameters(
  const google::protobuf::Map<std::string, std::string>& params, const char* field);

/// A volume or snapshot name (`field`): is_valid_volume_name, at most
/// limits::max_name_bytes; the refusal says which rule it breaks.
grpc::Status check_name(const std::string& name, const char* field, const char* what);

/// True when `id` could name a berth volume (is_valid_volume_name); any other id
/// cannot exist, so RPCs answer as for an unknown volume without asking.
bool may_exist(const std::string& id);

// -- capabilities ---------------------------------------------------------------

/// One capability berth can serve on `backend` ("" = any): access type mount
/// (fs_type "", "xfs" or "ext4"; fs_type is ignored by `local`) or block (only on
/// the block backend), and a single-node access mode. MULTI_NODE_* modes are
/// refused: a berth volume lives on one node.
grpc::Status check_capability(const v1::VolumeCapability& cap, const std::string& backend);

/// All of `caps` (required, at least one) pass check_capability.
grpc::Status check_capabilities(
  const google::protobuf::RepeatedPtrField<v1::VolumeCapability>& caps, const std::string& backend);

/// Mount flags: at most limits::max_mount_flags, each non-empty, at most
/// limits::max_mount_flag_bytes, no control characters, no "," (one flag per
/// entry); the backend applies its allow-list.
grpc::Status check_mount_flags(const google::protobuf::RepeatedPtrField<std::string>& flags);

// -- controller -----------------------------------------------------------------

/// CreateVolume -> (name, spec): name valid, capabilities supported, capacity
/// range sane, `backend` parameter known, content source decoded, fsType taken
/// from the capability when the parameters lack it. CO-reserved parameters
/// ("csi.storage.k8s.io/...") are dropped. mutable_parameters (optional) pass
/// check_mutable_parameters and are kept whole in spec.mutable_parameters; whether
/// the backend knows them is the volume actor's check. Topology is checked separately.
grpc::Status decode_create_volume(const v1::CreateVolumeRequest& req, const codec_env& env,
                                  volume_spec& out);

/// CreateSnapshot -> spec {kind snapshot, source the volume SRC}. Whether SRC can
/// exist is the refusal order's step 2 (refusal_order.hpp), not this.
grpc::Status decode_create_snapshot(const v1::CreateSnapshotRequest& req, const codec_env& env,
                                    volume_spec& out);

/// ControllerExpandVolume -> the bytes to grow to: capacity_range (required)
/// required_bytes, else limit_bytes; negative or both 0 -> INVALID_ARGUMENT.
grpc::Status decode_expand(const v1::ControllerExpandVolumeRequest& req, uint64_t& bytes);

/// ControllerModifyVolume -> modify_request {required_bytes 0, the mutable
/// parameters, record_owner::csi}: volume_id required, mutable_parameters within
/// check_mutable_parameters; an empty map decodes to a request that changes
/// nothing. Unknown or immutable keys are refused by the backend's validate_mutable
/// in the volume actor.
grpc::Status decode_modify(const v1::ControllerModifyVolumeRequest& req, modify_request& out);

/// accessibility_requirements: empty, or some requisite/preferred topology is this
/// node; RESOURCE_EXHAUSTED otherwise (the spec's code for "cannot provision there").
grpc::Status check_topology(const v1::TopologyRequirement& req, const codec_env& env);

/// True when `topo` names this node (its node segment is env.node_id).
bool is_this_node(const v1::Topology& topo, const codec_env& env);

/// The volume_context of a record: {"backend", "fsType" when set}. Derived from
/// the record only, so every RPC reports the same context for one volume.
void encode_volume_context(const volume_record& rec,
                           google::protobuf::Map<std::string, std::string>& out);

/// A record of kind volume -> Volume (id = name, capacity, context, source, this node).
void encode_volume(const volume_record& rec, const codec_env& env, v1::Volume* out);

/// A record of kind snapshot -> Snapshot (ready_to_use, creation_time).
void encode_snapshot(const volume_record& rec, v1::Snapshot* out);

/// A content source -> VolumeContentSource; false for an empty source.
bool encode_source(const content_source& source, v1::VolumeContentSource* out);

/// RFC 3339 (as written by now_rfc3339) -> Timestamp; nullopt when malformed.
std::optional<google::protobuf::Timestamp> parse_rfc3339(const std::string& text);

// -- pagination -----------------------------------------------------------------

/// One page of a name-sorted list: entries [begin, end), and the token of the
/// next page (the name of its first entry; "" on the last page).
struct page {
  size_t begin = 0;
  size_t end = 0;
  std::string next_token;
};

/// Pages `names` (sorted). max_entries < 0 -> INVALID_ARGUMENT; 0 = all. A
/// starting_token that is not one of `names` -> ABORTED, as the spec asks.
grpc::Status paginate(const std::vector<std::string>& names, int32_t max_entries,
                      const std::string& starting_token, page& out);

/// paginate() over records sorted by name (their names are the tokens).
grpc::Status paginate_records(const shared_records& recs, int32_t max_entries,
                              const std::string& starting_token, page& out);

/// Records of `kind`, sorted by name.
shared_records select_kind(shared_records recs, record_kind kind);

/// ListSnapshots filters: snapshots whose name is `snapshot_id` (when set) and
/// whose source is the volume `source_volume_id` (when set).
shared_records filter_snapshots(shared_records recs, const std::string& snapshot_id,
                                const std::string& source_volume_id);

// -- node -----------------------------------------------------------------------

/// NodeStageVolume -> stage_request (paths checked, capability supported).
grpc::Status decode_stage(const v1::NodeStageVolumeRequest& req, stage_request& out);

/// NodePublishVolume -> publish_request (staging path required: berth advertises
/// STAGE_UNSTAGE_VOLUME).
grpc::Status decode_publish(const v1::NodePublishVolumeRequest& req, publish_request& out);

/// volume_stats -> usage (bytes and inodes; bytes total only for raw block) and the
/// volume condition: what the stats saw, and `seen`, the health sampler's conditions, but
/// for those the stats saw afresh (a mount or device gone).
void encode_stats(const volume_stats& stats, const volume_conditions& seen,
                  v1::NodeGetVolumeStatsResponse* out);

/// The volume condition of `c`: abnormal with its messages, or healthy when empty.
void encode_condition(const volume_conditions& c, v1::VolumeCondition* out);

} // namespace berth::csi
