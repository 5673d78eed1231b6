#include "protocols/csi/csi_codec.hpp"

#include <algorithm>

#include <google/protobuf/util/time_util.h>

#include "core/limits.hpp"
#include "core/names.hpp"
#include "core/text.hpp"
#include "protocols/csi/status.hpp"

namespace berth::csi {

namespace {

/// The backend names the codec knows rules for.
constexpr const char* backend_block = "block";
constexpr const char* backend_local = "local";

/// Parameters with this prefix are the CO's (external-provisioner's
/// --extra-create-metadata, fstype, secrets): not volume options.
constexpr const char* reserved_prefix = "csi.storage.k8s.io/";

using mode = v1::VolumeCapability::AccessMode;

int64_t to_int64(uint64_t x) {
  return x > static_cast<uint64_t>(INT64_MAX) ? INT64_MAX : static_cast<int64_t>(x);
}

const char* mode_name(int m) {
  return v1::VolumeCapability::AccessMode::Mode_IsValid(m)
           ? v1::VolumeCapability::AccessMode::Mode_Name(
               static_cast<v1::VolumeCapability::AccessMode::Mode>(m))
               .c_str()
           : "an unknown mode";
}

} // namespace

// -- fields -----------------------------------------------------------------------

std::string topology_key(const std::string& driver_name) {
  return "topology." + driver_name + "/node";
}

grpc::Status require(const std::string& value, const char* field) {
  if (value.empty()) {
    return invalid_argument(std::string{field} + " is required");
  }
  return grpc::Status::OK;
}

grpc::Status check_path(const std::string& path, const char* field) {
  if (auto st = require(path, field); !st.ok()) {
    return st;
  }
  auto bad = [&](const std::string& why) {
    return invalid_argument(std::string{field} + " " + quote_input(path) + " " + why);
  };
  if (path.size() > limits::max_path_bytes) {
    return bad("is " + std::to_string(path.size()) + " bytes long; at most "
               + std::to_string(limits::max_path_bytes) + " are allowed");
  }
  if (path.find('\0') != std::string::npos || has_control_char(path)) {
    return bad("contains a NUL or control character");
  }
  if (path.front() != '/') {
    return bad("is not an absolute path");
  }
  if (path == "/") {
    return bad("is the root directory");
  }
  if (path.back() == '/') {
    return bad("is not normalized (trailing \"/\")");
  }
  size_t start = 1;
  while (start <= path.size()) {
    auto end = path.find('/', start);
    if (end == std::string::npos) {
      end = path.size();
    }
    auto part = path.substr(start, end - start);
    if (part.empty()) {
      return bad("is not normalized (empty component)");
    }
    if (part == "." || part == "..") {
      return bad("is not normalized (\".\" or \"..\" component)");
    }
    start = end + 1;
  }
  return grpc::Status::OK;
}

bool may_exist(const std::string& id) {
  return is_valid_volume_name(id);
}

namespace {

/// check_parameters and check_mutable_parameters: the same per-entry bounds; only
/// what counts toward limits::max_options differs (`every_entry`: all of them).
grpc::Status check_map(const google::protobuf::Map<std::string, std::string>& params,
                       const char* field, bool every_entry) {
  size_t kept = 0;
  for (const auto& [key, value] : params) {
    if (key.empty()) {
      return invalid_argument(std::string{field} + " has an empty key");
    }
    if (key.size() > limits::max_option_key_bytes) {
      return invalid_argument(std::string{field} + " key " + quote_input(key) + " is "
                              + std::to_string(key.size()) + " bytes long; at most "
                              + std::to_string(limits::max_option_key_bytes)
                              + " are allowed");
    }
    if (value.size() > limits::max_option_value_bytes) {
      return invalid_argument(std::string{field} + " " + quote_input(key) + " has a value of "
                              + std::to_string(value.size()) + " bytes; at most "
                              + std::to_string(limits::max_option_value_bytes)
                              + " are allowed");
    }
    bool dropped = key == "backend" || key.rfind(reserved_prefix, 0) == 0;
    kept += every_entry || !dropped ? 1 : 0;
  }
  if (kept > limits::max_options) {
    return invalid_argument(std::string{field} + " has " + std::to_string(kept) + " entries"
                            + (every_entry ? std::string{}
                                           : std::string{" (besides backend and "}
                                               + reserved_prefix + "*)")
                            + "; at most " + std::to_string(limits::max_options)
                            + " are allowed");
  }
  return grpc::Status::OK;
}

} // namespace

grpc::Status check_parameters(const google::protobuf::Map<std::string, std::string>& params,
                              const char* field) {
  return check_map(params, field, false);
}

grpc::Status check_mutable_parameters(
  const google::protobuf::Map<std::string, std::string>& params, const char* field) {
  return check_map(params, field, true);
}

grpc::Status check_name(const std::string& name, const char* field, const char* what) {
  if (auto st = require(name, field); !st.ok()) {
    return st;
  }
  if (name.size() > limits::max_name_bytes) {
    return invalid_argument(std::string{field} + " " + quote_input(name) + " is "
                            + std::to_string(name.size()) + " bytes long; a " + what
                            + " name has at most " + std::to_string(limits::max_name_bytes));
  }
  if (!is_valid_volume_name(name)) {
    return invalid_argument(std::string{field} + " " + quote_input(name) + " is not a valid " + what
                            + " name ([A-Za-z0-9][A-Za-z0-9_.-]*)");
  }
  return grpc::Status::OK;
}

// -- capabilities -----------------------------------------------------------------

grpc::Status check_mount_flags(const google::protobuf::RepeatedPtrField<std::string>& flags) {
  if (static_cast<size_t>(flags.size()) > limits::max_mount_flags) {
    return invalid_argument("volume_capability.mount.mount_flags has "
                            + std::to_string(flags.size()) + " flags; at most "
                            + std::to_string(limits::max_mount_flags) + " are allowed");
  }
  for (const auto& flag : flags) {
    if (flag.size() > limits::max_mount_flag_bytes) {
      return invalid_argument("mount flag " + quote_input(flag) + " is "
                              + std::to_string(flag.size()) + " bytes long; at most "
                              + std::to_string(limits::max_mount_flag_bytes) + " are allowed");
    }
    if (has_control_char(flag)) {
      return invalid_argument("mount flag " + quote_input(flag)
                              + " contains a NUL or control character");
    }
    if (flag.empty() || flag.find(',') != std::string::npos) {
      return invalid_argument("mount flag " + quote_input(flag)
                              + " is invalid: one non-empty flag per entry, no \",\"");
    }
  }
  return grpc::Status::OK;
}

grpc::Status check_capability(const v1::VolumeCapability& cap, const std::string& backend) {
  if (!cap.has_access_mode() || cap.access_mode().mode() == mode::UNKNOWN) {
    return invalid_argument("volume capability has no access mode");
  }
  switch (cap.access_mode().mode()) {
    case mode::SINGLE_NODE_WRITER:
    case mode::SINGLE_NODE_READER_ONLY:
    case mode::SINGLE_NODE_SINGLE_WRITER:
    case mode::SINGLE_NODE_MULTI_WRITER:
      break;
    default:
      return invalid_argument(std::string{"access mode "} + mode_name(cap.access_mode().mode())
                              + " is not supported: berth volumes are local to one node");
  }
  switch (cap.access_type_case()) {
    case v1::VolumeCapability::kBlock:
      if (!backend.empty() && backend != backend_block) {
        return invalid_argument("block access needs backend \"block\", not "
                                + quote_input(backend));
      }
      return grpc::Status::OK;
    case v1::VolumeCapability::kMount: {
      const auto& m = cap.mount();
      const auto& fs = m.fs_type();
      if (!fs.empty() && fs != "xfs" && fs != "ext4") {
        return invalid_argument("fs_type " + quote_input(fs)
                                + " is not supported: use xfs or ext4");
      }
      if (!m.volume_mount_group().empty()) {
        return invalid_argument("volume_mount_group is not supported (no VOLUME_MOUNT_GROUP)");
      }
      return check_mount_flags(m.mount_flags());
    }
    default:
      return invalid_argument("volume capability has neither mount nor block access type");
  }
}

grpc::Status check_capabilities(
  const google::protobuf::RepeatedPtrField<v1::VolumeCapability>& caps,
  const std::string& backend) {
  if (caps.empty()) {
    return invalid_argument("volume_capabilities is required");
  }
  for (const auto& cap : caps) {
    if (auto st = check_capability(cap, backend); !st.ok()) {
      return st;
    }
  }
  return grpc::Status::OK;
}

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
  out.owner = owner_csi;
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

// -- pagination -------------------------------------------------------------------

grpc::Status paginate(const std::vector<std::string>& names, int32_t max_entries,
                      const std::string& starting_token, page& out) {
  if (max_entries < 0) {
    return invalid_argument("max_entries " + std::to_string(max_entries) + " is negative");
  }
  out = page{};
  if (!starting_token.empty()) {
    auto it = std::lower_bound(names.begin(), names.end(), starting_token);
    if (it == names.end() || *it != starting_token) {
      return {grpc::StatusCode::ABORTED,
              "starting_token " + quote_input(starting_token)
                + " names no entry (the list changed): list again from the start"};
    }
    out.begin = static_cast<size_t>(it - names.begin());
  }
  out.end = names.size();
  if (max_entries > 0 && names.size() - out.begin > static_cast<size_t>(max_entries)) {
    out.end = out.begin + static_cast<size_t>(max_entries);
    out.next_token = names[out.end];
  }
  return grpc::Status::OK;
}

grpc::Status paginate_records(const std::vector<volume_record>& recs, int32_t max_entries,
                              const std::string& starting_token, page& out) {
  std::vector<std::string> names;
  names.reserve(recs.size());
  for (const auto& rec : recs) {
    names.push_back(rec.name);
  }
  return paginate(names, max_entries, starting_token, out);
}

std::vector<volume_record> select_kind(std::vector<volume_record> recs, record_kind kind) {
  recs.erase(std::remove_if(recs.begin(), recs.end(),
                            [&](const volume_record& r) { return r.kind != kind; }),
             recs.end());
  std::sort(recs.begin(), recs.end(),
            [](const volume_record& a, const volume_record& b) { return a.name < b.name; });
  return recs;
}

std::vector<volume_record> filter_snapshots(std::vector<volume_record> recs,
                                            const std::string& snapshot_id,
                                            const std::string& source_volume_id) {
  recs = select_kind(std::move(recs), record_kind::snapshot);
  const content_source source{record_kind::volume, source_volume_id};
  recs.erase(std::remove_if(recs.begin(), recs.end(),
                            [&](const volume_record& r) {
                              return (!snapshot_id.empty() && r.name != snapshot_id)
                                     || (!source_volume_id.empty() && r.source != source);
                            }),
             recs.end());
  return recs;
}

// -- node -------------------------------------------------------------------------

grpc::Status decode_stage(const v1::NodeStageVolumeRequest& req, stage_request& out) {
  if (auto st = require(req.volume_id(), "volume_id"); !st.ok()) {
    return st;
  }
  if (auto st = check_path(req.staging_target_path(), "staging_target_path"); !st.ok()) {
    return st;
  }
  if (!req.has_volume_capability()) {
    return invalid_argument("volume_capability is required");
  }
  const auto& cap = req.volume_capability();
  if (auto st = check_capability(cap, ""); !st.ok()) {
    return st;
  }
  out = stage_request{};
  out.staging_path = req.staging_target_path();
  out.block = cap.has_block();
  if (cap.has_mount()) {
    out.fs_type = cap.mount().fs_type();
    out.flags.assign(cap.mount().mount_flags().begin(), cap.mount().mount_flags().end());
  }
  return grpc::Status::OK;
}

grpc::Status decode_publish(const v1::NodePublishVolumeRequest& req, publish_request& out) {
  if (auto st = require(req.volume_id(), "volume_id"); !st.ok()) {
    return st;
  }
  if (auto st = check_path(req.target_path(), "target_path"); !st.ok()) {
    return st;
  }
  if (auto st = check_path(req.staging_target_path(), "staging_target_path"); !st.ok()) {
    return st;
  }
  if (req.target_path() == req.staging_target_path()) {
    return invalid_argument("target_path " + quote_input(req.target_path())
                            + " is the staging_target_path");
  }
  if (!req.has_volume_capability()) {
    return invalid_argument("volume_capability is required");
  }
  const auto& cap = req.volume_capability();
  if (auto st = check_capability(cap, ""); !st.ok()) {
    return st;
  }
  out = publish_request{};
  out.target = req.target_path();
  out.staging_path = req.staging_target_path();
  out.how.block = cap.has_block();
  out.how.readonly = req.readonly() || cap.access_mode().mode() == mode::SINGLE_NODE_READER_ONLY;
  if (cap.has_mount()) {
    out.how.flags.assign(cap.mount().mount_flags().begin(), cap.mount().mount_flags().end());
  }
  return grpc::Status::OK;
}

void encode_stats(const volume_stats& stats, v1::NodeGetVolumeStatsResponse* out) {
  auto* bytes = out->add_usage();
  bytes->set_unit(v1::VolumeUsage::BYTES);
  bytes->set_total(to_int64(stats.total_bytes));
  if (!stats.block) {
    bytes->set_available(to_int64(stats.available_bytes));
    bytes->set_used(to_int64(stats.used_bytes));
    auto* inodes = out->add_usage();
    inodes->set_unit(v1::VolumeUsage::INODES);
    inodes->set_total(to_int64(stats.total_inodes));
    inodes->set_available(to_int64(stats.free_inodes));
    inodes->set_used(to_int64(stats.used_inodes));
  }
  auto* cond = out->mutable_volume_condition();
  cond->set_abnormal(stats.abnormal);
  cond->set_message(stats.abnormal ? stats.message : "volume is healthy");
}

} // namespace berth::csi
