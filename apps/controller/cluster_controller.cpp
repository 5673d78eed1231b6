// The controller's RPCs on BerthVolumes: each writes the object's spec, then waits until
// the node's agent answers in its status (docs/running.md, "berth on a cluster").
//
// Over 400 lines: the volume RPCs share the helpers at the top (unknown_volume, the spec's
// comparison, whether a status answered or applied a change), which a split would have to
// turn into a header of their own; the snapshot RPCs, which share none, are in
// cluster_snapshots.cpp.

#include <algorithm>

#include <spdlog/spdlog.h>

#include "apps/controller/cluster_services.hpp"
#include "apps/controller/object_rpcs.hpp"
#include "apps/controller/rpc_support.hpp"
#include "apps/controller/volume_condition.hpp"
#include "core/errors.hpp"
#include "core/text.hpp"
#include "protocols/csi/status.hpp"

namespace berth::controller {

namespace {

using csi::invalid_argument;
using csi::not_found;
using csi::to_status;

grpc::Status unknown_volume(const std::string& id) {
  return not_found("volume " + quote_input(id) + " does not exist");
}

/// The node segments of `topologies`; a topology without berth's key names no node.
std::vector<std::string> nodes_of(const google::protobuf::RepeatedPtrField<v1::Topology>& topologies,
                                  const std::string& key) {
  std::vector<std::string> out;
  for (const auto& t : topologies) {
    auto it = t.segments().find(key);
    if (it != t.segments().end()) {
      out.push_back(it->second);
    }
  }
  return out;
}

/// The spec a CreateVolume asks for, on `node`.
kube::volume_object_spec spec_of(const v1::CreateVolumeRequest& req, const volume_spec& decoded,
                                 const std::string& node) {
  kube::volume_object_spec s;
  s.csi_name = req.name();
  s.node = node;
  s.size_bytes = decoded.required_bytes;
  s.limit_bytes = decoded.limit_bytes;
  s.parameters = {decoded.parameters.begin(), decoded.parameters.end()};
  s.parameters["backend"] = decoded.backend;
  s.mutable_parameters = {decoded.mutable_parameters.begin(), decoded.mutable_parameters.end()};
  if (!decoded.source.empty()) {
    (decoded.source.kind == record_kind::snapshot ? s.source_snapshot : s.source_volume) =
      decoded.source.name;
  }
  s.access_type = "mount";
  for (const auto& cap : req.volume_capabilities()) {
    if (cap.has_block()) {
      s.access_type = "block";
    } else if (cap.has_mount() && s.mount_flags.empty()) {
      s.fs_type = cap.mount().fs_type();
      s.mount_flags = {cap.mount().mount_flags().begin(), cap.mount().mount_flags().end()};
    }
    if (s.access_mode.empty()) {
      s.access_mode = v1::VolumeCapability::AccessMode::Mode_Name(cap.access_mode().mode());
    }
  }
  return s;
}

/// Why an existing object cannot answer this CreateVolume ("" when it can).
std::string incompatibility(const kube::volume_object_spec& have, const kube::volume_object_spec& want) {
  if (have.size_bytes != want.size_bytes || have.limit_bytes != want.limit_bytes) {
    return "another capacity range";
  }
  if (have.parameters != want.parameters) {
    return "other parameters";
  }
  if (have.source_volume != want.source_volume || have.source_snapshot != want.source_snapshot) {
    return "another content source";
  }
  if (have.access_type != want.access_type) {
    return "another access type";
  }
  return {};
}

bool answered(const kube::volume_object& obj) {
  return obj.status.observed_generation >= obj.generation && !obj.status.phase.empty();
}

bool applied(const kube::volume_object& obj, const google::protobuf::Map<std::string, std::string>& asked) {
  for (const auto& [k, v] : asked) {
    auto it = obj.status.applied_parameters.find(k);
    if (it == obj.status.applied_parameters.end() || it->second != v) {
      return false;
    }
  }
  return true;
}

} // namespace

cluster_controller::cluster_controller(volume_store& store, snapshot_store& snapshots,
                                       csi::codec_env env, bool advertise_since_1_10)
    : store_(store), snapshots_(snapshots), env_(std::move(env)),
      topology_key_(csi::topology_key(env_.driver_name)),
      advertise_since_1_10_(advertise_since_1_10) {}

void cluster_controller::encode(const kube::volume_object& obj, v1::Volume* out) const {
  out->set_volume_id(obj.spec.csi_name);
  out->set_capacity_bytes(clamp_bytes(obj.status.capacity_bytes));
  auto& context = *out->mutable_volume_context();
  if (auto it = obj.spec.parameters.find("backend"); it != obj.spec.parameters.end()) {
    context["backend"] = it->second;
  }
  if (auto it = obj.spec.parameters.find("fsType"); it != obj.spec.parameters.end()) {
    context["fsType"] = it->second;
  }
  if (!obj.spec.source_volume.empty()) {
    out->mutable_content_source()->mutable_volume()->set_volume_id(obj.spec.source_volume);
  } else if (!obj.spec.source_snapshot.empty()) {
    out->mutable_content_source()->mutable_snapshot()->set_snapshot_id(obj.spec.source_snapshot);
  }
  (*out->add_accessible_topology()->mutable_segments())[topology_key_] = obj.spec.node;
}

grpc::Status cluster_controller::source_node(const content_source& source,
                                             clock_type::time_point until, std::string& node) {
  if (source.kind == record_kind::snapshot) {
    auto snap = snapshots_.find(source.name, until);
    if (!snap) {
      return to_status(snap.error());
    }
    if (!*snap || (*snap)->deleting) {
      return not_found("snapshot " + quote_input(source.name) + " does not exist");
    }
    if ((*snap)->status.phase == kube::phase_failed) {
      return not_found("snapshot " + quote_input(source.name) + " failed on node "
                       + quote_input((*snap)->spec.node) + ": " + (*snap)->status.message);
    }
    if (!(*snap)->status.ready_to_use) {
      return {grpc::StatusCode::UNAVAILABLE, "snapshot " + quote_input(source.name)
                                               + " is not ready yet on node "
                                               + quote_input((*snap)->spec.node) + "; retry"};
    }
    node = (*snap)->spec.node;
    return grpc::Status::OK;
  }
  auto volume = store_.find(source.name, until);
  if (!volume) {
    return to_status(volume.error());
  }
  if (!*volume) {
    return not_found("source volume " + quote_input(source.name) + " does not exist");
  }
  node = (*volume)->spec.node;
  return grpc::Status::OK;
}

grpc::Status cluster_controller::CreateVolume(grpc::ServerContext* ctx,
                                              const v1::CreateVolumeRequest* req,
                                              v1::CreateVolumeResponse* resp) {
  auto until = deadline_of(ctx);
  if (req->name().empty()) {
    return invalid_argument("name is required");
  }
  if (req->volume_capabilities().empty()) {
    return invalid_argument("volume_capabilities is required");
  }
  volume_spec decoded;
  if (auto st = csi::decode_create_volume(*req, env_, decoded); !st.ok()) {
    return st;
  }
  auto existing = store_.find(req->name(), until);
  if (!existing) {
    return to_status(existing.error());
  }
  kube::volume_object obj;
  if (*existing) {
    obj = std::move(**existing);
    auto why = incompatibility(obj.spec, spec_of(*req, decoded, obj.spec.node));
    if (!why.empty()) {
      return {grpc::StatusCode::ALREADY_EXISTS,
              "volume " + quote_input(req->name()) + " exists with " + why};
    }
    if (obj.deleting) {
      return {grpc::StatusCode::ABORTED, "volume " + quote_input(req->name())
                                           + " is being removed after an earlier attempt failed; retry"};
    }
  } else {
    placement_request where;
    const auto& topo = req->accessibility_requirements();
    where.preferred = nodes_of(topo.preferred(), topology_key_);
    where.requisite = nodes_of(topo.requisite(), topology_key_);
    where.backend = decoded.backend;
    where.bytes = decoded.required_bytes;
    if (!decoded.source.empty()) {
      if (auto st = source_node(decoded.source, until, where.pinned); !st.ok()) {
        return st;
      }
    }
    auto capacity = store_.capacities(until);
    if (!capacity) {
      return to_status(capacity.error());
    }
    auto node = choose_node(where, *capacity);
    if (!node) {
      return to_status(node.error());
    }
    auto created = store_.create(spec_of(*req, decoded, *node), until);
    if (!created) {
      return to_status(created.error());
    }
    obj = std::move(*created);
    spdlog::info("CreateVolume {}: BerthVolume {} on node {}", quote_input(req->name()), obj.name,
                 *node);
  }
  kube::volume_object made;
  if (auto st = wait_created(store_, obj, answered, "volume", "CreateVolume", until, made); !st.ok()) {
    return st;
  }
  encode(made, resp->mutable_volume());
  return grpc::Status::OK;
}

grpc::Status cluster_controller::DeleteVolume(grpc::ServerContext* ctx,
                                              const v1::DeleteVolumeRequest* req,
                                              v1::DeleteVolumeResponse*) {
  auto until = deadline_of(ctx);
  if (req->volume_id().empty()) {
    return invalid_argument("volume_id is required");
  }
  return delete_and_wait(store_, store_, req->volume_id(), "volume", "DeleteVolume", until);
}

grpc::Status cluster_controller::ControllerExpandVolume(grpc::ServerContext* ctx,
                                                        const v1::ControllerExpandVolumeRequest* req,
                                                        v1::ControllerExpandVolumeResponse* resp) {
  auto until = deadline_of(ctx);
  if (req->volume_id().empty()) {
    return invalid_argument("volume_id is required");
  }
  if (!req->has_capacity_range()) {
    return invalid_argument("capacity_range is required");
  }
  uint64_t bytes = 0;
  if (auto st = csi::decode_expand(*req, bytes); !st.ok()) {
    return st;
  }
  auto found = store_.find(req->volume_id(), until);
  if (!found) {
    return to_status(found.error());
  }
  if (!*found) {
    return unknown_volume(req->volume_id());
  }
  bool block = req->has_volume_capability() && req->volume_capability().has_block();
  auto answer = [&](const kube::volume_object& obj) {
    resp->set_capacity_bytes(clamp_bytes(obj.status.capacity_bytes));
    // A filesystem must be grown on the node; a raw block device need not.
    resp->set_node_expansion_required(!block);
    return grpc::Status::OK;
  };
  if ((*found)->status.capacity_bytes >= bytes) {
    return answer(**found);
  }
  auto written = store_.change_spec(
    (*found)->name,
    [&](const kube::volume_object&, uint64_t& size, auto&) { size = std::max(size, bytes); }, until);
  if (!written) {
    return to_status(written.error());
  }
  auto generation = written->generation;
  auto done = store_.wait(
    written->name,
    [&](const kube::volume_object& o) {
      return o.status.capacity_bytes >= bytes
             || (o.status.observed_generation >= generation && !o.status.reason.empty());
    },
    until);
  if (!done) {
    return wait_failed(done.error(), *written, "grown volume");
  }
  if (!*done) {
    return unknown_volume(req->volume_id());
  }
  if ((*done)->status.capacity_bytes < bytes) {
    auto failed = node_failure_of(**done);
    // The volume stays as it was, so its spec must not ask for the size any more.
    auto reverted = store_.change_spec(
      written->name,
      [&](const kube::volume_object& now, uint64_t& size, auto&) {
        if (size == bytes) {
          size = std::max(now.status.capacity_bytes, (*found)->spec.size_bytes);
        }
      },
      until);
    if (!reverted) {
      spdlog::warn("ControllerExpandVolume {}: cannot take back the size asked for: {}",
                   quote_input(req->volume_id()), describe(reverted.error()));
    }
    return failed;
  }
  return answer(**done);
}

grpc::Status cluster_controller::ControllerModifyVolume(grpc::ServerContext* ctx,
                                                        const v1::ControllerModifyVolumeRequest* req,
                                                        v1::ControllerModifyVolumeResponse*) {
  auto until = deadline_of(ctx);
  if (req->volume_id().empty()) {
    return invalid_argument("volume_id is required");
  }
  modify_request change;
  if (auto st = csi::decode_modify(*req, change); !st.ok()) {
    return st;
  }
  auto found = store_.find(req->volume_id(), until);
  if (!found) {
    return to_status(found.error());
  }
  if (!*found) {
    return unknown_volume(req->volume_id());
  }
  const auto& asked = req->mutable_parameters();
  if (applied(**found, asked)) {
    return grpc::Status::OK; // nothing asked, or all of it in effect already
  }
  auto written = store_.change_spec(
    (*found)->name,
    [&](const kube::volume_object&, uint64_t&, std::map<std::string, std::string>& params) {
      for (const auto& [k, v] : asked) {
        params[k] = v;
      }
    },
    until);
  if (!written) {
    return to_status(written.error());
  }
  auto generation = written->generation;
  auto done = store_.wait(
    written->name,
    [&](const kube::volume_object& o) {
      return applied(o, asked) || (o.status.observed_generation >= generation && !o.status.reason.empty());
    },
    until);
  if (!done) {
    return wait_failed(done.error(), *written, "modified volume");
  }
  if (!*done) {
    return unknown_volume(req->volume_id());
  }
  if (!applied(**done, asked)) {
    auto failed = node_failure_of(**done);
    // The volume stays as it was: its spec goes back to what the node applied.
    auto reverted = store_.change_spec(
      written->name,
      [&](const kube::volume_object& now, uint64_t&, std::map<std::string, std::string>& params) {
        for (const auto& [k, v] : asked) {
          auto it = now.status.applied_parameters.find(k);
          if (it == now.status.applied_parameters.end()) {
            params.erase(k);
          } else {
            params[k] = it->second;
          }
        }
      },
      until);
    if (!reverted) {
      spdlog::warn("ControllerModifyVolume {}: cannot take back the parameters asked for: {}",
                   quote_input(req->volume_id()), describe(reverted.error()));
    }
    return failed;
  }
  return grpc::Status::OK;
}

grpc::Status cluster_controller::ValidateVolumeCapabilities(
  grpc::ServerContext* ctx, const v1::ValidateVolumeCapabilitiesRequest* req,
  v1::ValidateVolumeCapabilitiesResponse* resp) {
  auto until = deadline_of(ctx);
  if (req->volume_id().empty()) {
    return invalid_argument("volume_id is required");
  }
  if (req->volume_capabilities().empty()) {
    return invalid_argument("volume_capabilities is required");
  }
  auto found = store_.find(req->volume_id(), until);
  if (!found) {
    return to_status(found.error());
  }
  if (!*found) {
    return unknown_volume(req->volume_id());
  }
  auto backend = (*found)->spec.parameters["backend"];
  if (auto st = csi::check_capabilities(req->volume_capabilities(), backend); !st.ok()) {
    resp->set_message(st.error_message());
    return grpc::Status::OK;
  }
  auto* confirmed = resp->mutable_confirmed();
  *confirmed->mutable_volume_context() = req->volume_context();
  *confirmed->mutable_volume_capabilities() = req->volume_capabilities();
  *confirmed->mutable_parameters() = req->parameters();
  return grpc::Status::OK;
}

grpc::Status cluster_controller::ListVolumes(grpc::ServerContext* ctx,
                                             const v1::ListVolumesRequest* req,
                                             v1::ListVolumesResponse* resp) {
  auto until = deadline_of(ctx);
  if (req->max_entries() < 0) {
    return invalid_argument("max_entries " + std::to_string(req->max_entries()) + " is negative");
  }
  auto page = store_.list(static_cast<size_t>(req->max_entries()), req->starting_token(), until);
  if (!page) {
    if (!req->starting_token().empty()
        && (is(page.error(), ec::invalid_argument) || is(page.error(), ec::aborted))) {
      return {grpc::StatusCode::ABORTED, "starting_token " + quote_input(req->starting_token())
                                           + " is not valid (expired or not from ListVolumes): "
                                           + describe(page.error())};
    }
    return to_status(page.error());
  }
  auto nodes = store_.readiness(until); // one LIST of the Nodes for the whole page
  if (!nodes) {
    return to_status(nodes.error());
  }
  for (const auto& item : page->items) {
    auto obj = kube::parse_volume_object(item);
    if (!obj || obj->spec.csi_name.empty()) {
      continue;
    }
    auto* entry = resp->add_entries();
    encode(*obj, entry->mutable_volume());
    auto node = nodes->find(obj->spec.node);
    encode_object_condition(
      *obj, node == nodes->end() ? std::nullopt : std::optional<kube::node_readiness>{node->second},
      entry->mutable_status()->mutable_volume_condition());
  }
  resp->set_next_token(page->next);
  return grpc::Status::OK;
}

grpc::Status cluster_controller::ControllerGetVolume(grpc::ServerContext* ctx,
                                                     const v1::ControllerGetVolumeRequest* req,
                                                     v1::ControllerGetVolumeResponse* resp) {
  auto until = deadline_of(ctx);
  if (req->volume_id().empty()) {
    return invalid_argument("volume_id is required");
  }
  auto found = store_.find(req->volume_id(), until);
  if (!found) {
    return to_status(found.error());
  }
  if (!*found) {
    return unknown_volume(req->volume_id());
  }
  auto node = store_.readiness_of((*found)->spec.node, until);
  if (!node) {
    return to_status(node.error());
  }
  encode(**found, resp->mutable_volume());
  encode_object_condition(**found, *node, resp->mutable_status()->mutable_volume_condition());
  return grpc::Status::OK;
}

grpc::Status cluster_controller::GetCapacity(grpc::ServerContext* ctx,
                                             const v1::GetCapacityRequest* req,
                                             v1::GetCapacityResponse* resp) {
  auto until = deadline_of(ctx);
  auto it = req->parameters().find("backend");
  auto backend = it == req->parameters().end() ? env_.default_backend : it->second;
  if (env_.backends.count(backend) == 0) {
    return invalid_argument("parameter backend " + quote_input(backend) + " names no backend berth has");
  }
  if (!req->volume_capabilities().empty()
      && !csi::check_capabilities(req->volume_capabilities(), backend).ok()) {
    resp->set_available_capacity(0);
    return grpc::Status::OK;
  }
  auto capacity = store_.capacities(until);
  if (!capacity) {
    return to_status(capacity.error());
  }
  auto room = [&](const std::string& node) -> uint64_t {
    auto n = capacity->find(node);
    if (n == capacity->end()) {
      return 0;
    }
    auto b = n->second.find(backend);
    return b == n->second.end() ? 0 : b->second;
  };
  uint64_t bytes = 0;
  if (req->has_accessible_topology()) {
    auto seg = req->accessible_topology().segments().find(topology_key_);
    if (seg != req->accessible_topology().segments().end()) {
      bytes = room(seg->second);
    }
  } else {
    // Without a segment, the most any one volume can get: a volume lives on one node.
    for (const auto& [node, ignored] : *capacity) {
      bytes = std::max(bytes, room(node));
    }
  }
  resp->set_available_capacity(clamp_bytes(bytes));
  return grpc::Status::OK;
}

grpc::Status cluster_controller::ControllerGetCapabilities(
  grpc::ServerContext*, const v1::ControllerGetCapabilitiesRequest*,
  v1::ControllerGetCapabilitiesResponse* resp) {
  using rpc = v1::ControllerServiceCapability::RPC;
  for (auto type :
       {rpc::CREATE_DELETE_VOLUME, rpc::LIST_VOLUMES, rpc::GET_CAPACITY, rpc::CLONE_VOLUME,
        rpc::EXPAND_VOLUME, rpc::GET_VOLUME, rpc::VOLUME_CONDITION, rpc::SINGLE_NODE_MULTI_WRITER,
        rpc::MODIFY_VOLUME, rpc::CREATE_DELETE_SNAPSHOT, rpc::LIST_SNAPSHOTS}) {
    resp->add_capabilities()->mutable_rpc()->set_type(type);
  }
  if (advertise_since_1_10_) {
    resp->add_capabilities()->mutable_rpc()->set_type(rpc::GET_SNAPSHOT);
  }
  return grpc::Status::OK;
}

} // namespace berth::controller
