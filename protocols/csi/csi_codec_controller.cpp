// The CSI codec, controller side: CreateVolume, CreateSnapshot, expand and modify
// decoded; volumes, snapshots, sources and topology encoded.

#include "protocols/csi/csi_codec.hpp"

#include <algorithm>

#include <google/protobuf/util/time_util.h>

#include "core/limits.hpp"
#include "core/text.hpp"
#include "protocols/csi/detail/codec_common.hpp"
#include "protocols/csi/status.hpp"

namespace berth::csi {

using namespace detail;

// -- controller -------------------------------------------------------------------

namespace {

grpc::Status decode_backend(const google::protobuf::Map<std::string, std::string>& params,
                            const codec_env& env, std::string& backend) {
  auto it = params.find("backend");
  backend = it == params.end() ? env.default_backend : it->second;
  if (env.backends.count(backend) == 0) {
    return invalid_argument("parameter backend " + quote_input(backend)
                            + " names no configured backend");
  }
  return grpc::Status::OK;
}

option_map decode_parameters(const google::protobuf::Map<std::string, std::string>& params) {
  option_map out;
  for (const auto& [k, v] : params) {
    if (k == "backend" || k.rfind(reserved_prefix, 0) == 0) {
      continue;
    }
    out.emplace(k, v);
  }
  return out;
}

} // namespace

grpc::Status decode_create_volume(const v1::CreateVolumeRequest& req, const codec_env& env,
                                  volume_spec& out) {
  if (auto st = check_name(req.name(), "name", "volume"); !st.ok()) {
    return st;
  }
  if (auto st = check_parameters(req.parameters(), "parameters"); !st.ok()) {
    return st;
  }
  if (auto st = check_mutable_parameters(req.mutable_parameters(), "mutable_parameters");
      !st.ok()) {
    return st;
  }
  out = volume_spec{};
  out.kind = record_kind::volume;
  if (auto st = decode_backend(req.parameters(), env, out.backend); !st.ok()) {
    return st;
  }
  if (auto st = check_capabilities(req.volume_capabilities(), out.backend); !st.ok()) {
    return st;
  }
  out.parameters = decode_parameters(req.parameters());
  // Kept whole, apart from the parameters: the volume actor checks them against the
  // backend (validate_mutable), and ControllerModifyVolume changes them later.
  out.mutable_parameters.insert(req.mutable_parameters().begin(), req.mutable_parameters().end());
  // fsType: from the parameters, or from the (single) fs_type of the capabilities.
  std::string fs_type;
  for (const auto& cap : req.volume_capabilities()) {
    if (!cap.has_mount() || cap.mount().fs_type().empty()) {
      continue;
    }
    if (!fs_type.empty() && fs_type != cap.mount().fs_type()) {
      return invalid_argument("volume_capabilities ask for two fs types, " + quote_input(fs_type)
                              + " and " + quote_input(cap.mount().fs_type()));
    }
    fs_type = cap.mount().fs_type();
  }
  if (!fs_type.empty() && out.backend != backend_local) {
    auto it = out.parameters.find("fsType");
    if (it == out.parameters.end()) {
      out.parameters.emplace("fsType", fs_type);
    } else if (it->second != fs_type) {
      return invalid_argument("parameter fsType " + quote_input(it->second)
                              + " contradicts the capability's fs_type " + quote_input(fs_type));
    }
  }
  if (out.parameters.size() > limits::max_options) {
    return invalid_argument("parameters with the capability's fsType make "
                            + std::to_string(out.parameters.size()) + " entries; at most "
                            + std::to_string(limits::max_options) + " are allowed");
  }
  if (req.has_capacity_range()) {
    auto required = req.capacity_range().required_bytes();
    auto limit = req.capacity_range().limit_bytes();
    if (required < 0 || limit < 0) {
      return invalid_argument("capacity_range must not be negative (required_bytes "
                              + std::to_string(required) + ", limit_bytes "
                              + std::to_string(limit) + ")");
    }
    if (limit > 0 && required > limit) {
      return invalid_argument("capacity_range limit_bytes " + std::to_string(limit)
                              + " is below required_bytes " + std::to_string(required));
    }
    out.required_bytes = static_cast<uint64_t>(required);
    out.limit_bytes = static_cast<uint64_t>(limit);
  }
  if (req.has_volume_content_source()) {
    const auto& src = req.volume_content_source();
    record_kind kind = record_kind::volume;
    std::string id;
    if (src.has_snapshot()) {
      kind = record_kind::snapshot;
      id = src.snapshot().snapshot_id();
    } else if (src.has_volume()) {
      kind = record_kind::volume;
      id = src.volume().volume_id();
    } else {
      return invalid_argument("volume_content_source names neither a snapshot nor a volume");
    }
    if (id.empty()) {
      return invalid_argument("volume_content_source " + to_string(kind) + " id is required");
    }
    if (!may_exist(id)) {
      return not_found("content source " + to_string(kind) + " " + quote_input(id)
                       + " does not exist");
    }
    out.source = content_source{kind, id};
  }
  return grpc::Status::OK;
}

grpc::Status decode_create_snapshot(const v1::CreateSnapshotRequest& req, const codec_env& env,
                                    volume_spec& out) {
  if (auto st = check_name(req.name(), "name", "snapshot"); !st.ok()) {
    return st;
  }
  if (auto st = require(req.source_volume_id(), "source_volume_id"); !st.ok()) {
    return st;
  }
  if (auto st = check_parameters(req.parameters(), "parameters"); !st.ok()) {
    return st;
  }
  out = volume_spec{};
  out.kind = record_kind::snapshot;
  if (auto st = decode_backend(req.parameters(), env, out.backend); !st.ok()) {
    return st;
  }
  out.parameters = decode_parameters(req.parameters());
  out.source = content_source{record_kind::volume, req.source_volume_id()};
  return grpc::Status::OK;
}

grpc::Status decode_expand(const v1::ControllerExpandVolumeRequest& req, uint64_t& bytes) {
  if (!req.has_capacity_range()) {
    return invalid_argument("capacity_range is required");
  }
  auto required = req.capacity_range().required_bytes();
  auto limit = req.capacity_range().limit_bytes();
  if (required < 0 || limit < 0 || (required == 0 && limit == 0)
      || (limit > 0 && required > limit)) {
    return invalid_argument("capacity_range is invalid (required_bytes " + std::to_string(required)
                            + ", limit_bytes " + std::to_string(limit) + ")");
  }
  bytes = static_cast<uint64_t>(required > 0 ? required : limit);
  if (req.has_volume_capability()) {
    return check_capability(req.volume_capability(), "");
  }
  return grpc::Status::OK;
}

grpc::Status decode_modify(const v1::ControllerModifyVolumeRequest& req, modify_request& out) {
  if (auto st = require(req.volume_id(), "volume_id"); !st.ok()) {
    return st;
  }
  // An empty map asks for nothing, and the spec says "SPs MUST NOT modify volumes
  // based on the absence of keys": the service answers OK once the volume is known
  // to exist (docs/csi-errors.md).
  if (auto st = check_mutable_parameters(req.mutable_parameters(), "mutable_parameters");
      !st.ok()) {
    return st;
  }
  out = modify_request{};
  out.parameters.insert(req.mutable_parameters().begin(), req.mutable_parameters().end());
  out.owner = record_owner::csi;
  return grpc::Status::OK;
}

bool is_this_node(const v1::Topology& topo, const codec_env& env) {
  auto it = topo.segments().find(topology_key(env.driver_name));
  return it != topo.segments().end() && it->second == env.node_id;
}

grpc::Status check_topology(const v1::TopologyRequirement& req, const codec_env& env) {
  if (req.requisite().empty() && req.preferred().empty()) {
    return grpc::Status::OK;
  }
  auto here = [&](const v1::Topology& t) { return is_this_node(t, env); };
  if (std::any_of(req.requisite().begin(), req.requisite().end(), here)
      || std::any_of(req.preferred().begin(), req.preferred().end(), here)) {
    return grpc::Status::OK;
  }
  return {grpc::StatusCode::RESOURCE_EXHAUSTED,
          "accessibility_requirements do not include this node (" + topology_key(env.driver_name)
            + "=" + env.node_id + "): berth provisions node-local volumes only"};
}

void encode_volume_context(const volume_record& rec,
                           google::protobuf::Map<std::string, std::string>& out) {
  out["backend"] = rec.backend;
  if (auto it = rec.options.find("fsType"); it != rec.options.end()) {
    out["fsType"] = it->second;
  }
}

bool encode_source(const content_source& source, v1::VolumeContentSource* out) {
  if (source.empty()) {
    return false;
  }
  switch (source.kind) {
    case record_kind::snapshot:
      out->mutable_snapshot()->set_snapshot_id(source.name);
      return true;
    case record_kind::volume:
      out->mutable_volume()->set_volume_id(source.name);
      return true;
  }
  return false;
}

void encode_volume(const volume_record& rec, const codec_env& env, v1::Volume* out) {
  out->set_volume_id(rec.name);
  out->set_capacity_bytes(to_int64(rec.capacity_bytes));
  encode_volume_context(rec, *out->mutable_volume_context());
  v1::VolumeContentSource src;
  if (encode_source(rec.source, &src)) {
    *out->mutable_content_source() = std::move(src);
  }
  (*out->add_accessible_topology()->mutable_segments())[topology_key(env.driver_name)] =
    env.node_id;
}

std::optional<google::protobuf::Timestamp> parse_rfc3339(const std::string& text) {
  google::protobuf::Timestamp ts;
  if (text.empty() || !google::protobuf::util::TimeUtil::FromString(text, &ts)) {
    return std::nullopt;
  }
  return ts;
}

void encode_snapshot(const volume_record& rec, v1::Snapshot* out) {
  out->set_snapshot_id(rec.name);
  out->set_size_bytes(to_int64(rec.capacity_bytes));
  if (!rec.source.empty() && rec.source.kind == record_kind::volume) {
    out->set_source_volume_id(rec.source.name);
  }
  if (auto ts = parse_rfc3339(rec.created_at)) {
    *out->mutable_creation_time() = *ts;
  }
  // The actor answers only after the snapshot is cut and durable.
  out->set_ready_to_use(true);
}

} // namespace berth::csi
