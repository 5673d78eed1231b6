#include "protocols/csi/csi_services.hpp"

#include <algorithm>

#include "core/text.hpp"

namespace berth::csi {

namespace {

grpc::Status unimplemented(const char* rpc) {
  return {grpc::StatusCode::UNIMPLEMENTED,
          std::string{rpc} + " is not implemented: berth volumes are node-local"};
}

/// A request that names the volume `id` in its REQUIRED field `field`, with
/// `required` fields of its own after it, and `content` its first content refusal.
request_shape about_volume(const std::string& id, const char* field,
                           std::vector<required_field> required = {},
                           grpc::Status content = grpc::Status::OK) {
  request_shape shape;
  shape.required.push_back({!id.empty(), field});
  shape.required.insert(shape.required.end(), required.begin(), required.end());
  shape.volume_id = &id;
  shape.content = std::move(content);
  return shape;
}

} // namespace

controller_service::controller_service(gateway& gw, registry_actor registry, const csi_config& cfg)
    : gw_(gw), registry_(std::move(registry)), env_(make_codec_env(cfg)), backends_(cfg.backends),
      stats_(stats_or_private(cfg.stats)), directory_(cfg.directory),
      advertise_since_1_10_(cfg.advertise_since_1_10) {
  SetMessageAllocatorFor_ListVolumes(&list_volumes_messages_);
  SetMessageAllocatorFor_ListSnapshots(&list_snapshots_messages_);
}

// -- volumes ----------------------------------------------------------------------

grpc::ServerUnaryReactor* controller_service::CreateVolume(grpc::CallbackServerContext* ctx,
                                                           const v1::CreateVolumeRequest* req,
                                                           v1::CreateVolumeResponse* resp) {
  auto* r = start(stats_, "CreateVolume");
  volume_spec spec;
  request_shape shape;
  shape.required = {{!req->name().empty(), "name"},
                    {!req->volume_capabilities().empty(), "volume_capabilities"}};
  shape.content = decode_create_volume(*req, env_, spec);
  if (shape.content.ok()) {
    shape.content = check_topology(req->accessibility_requirements(), env_);
  }
  if (auto* refused = refuse(gw_, registry_, r, shape)) {
    return refused;
  }
  spec.from = caller_of(ctx);
  auto created = [this, r, resp](const volume_record& rec) {
    finish(r, [&] {
      if (rec.kind != record_kind::volume) {
        return grpc::Status{grpc::StatusCode::ALREADY_EXISTS,
                            "name " + quote_input(rec.name) + " is taken by a "
                              + to_string(rec.kind)};
      }
      encode_volume(rec, env_, resp->mutable_volume());
      return grpc::Status::OK;
    });
  };
  send_to_registry<volume_record>(registry_, answer_of<volume_record>(r, std::move(created)),
                                  atom::create_v, req->name(), std::move(spec));
  return r;
}

grpc::ServerUnaryReactor* controller_service::remove_kind(grpc::CallbackServerContext*,
                                                          const char* rpc,
                                                          const std::string& name,
                                                          const char* field, record_kind kind) {
  auto* r = start(stats_, rpc);
  request_shape shape;
  shape.required = {{!name.empty(), field}};
  if (auto* refused = refuse(gw_, registry_, r, shape)) {
    return refused;
  }
  if (!may_exist(name)) {
    return finish_now(r, grpc::Status::OK); // no such name can exist: already gone
  }
  // One namespace holds volumes and snapshots: the registry removes the record only
  // when it is of `kind`, in one message, so DeleteVolume never removes a snapshot.
  send_to_registry<atom::ok>(
    registry_,
    [r](caf::expected<atom::ok> out) {
      if (out || is(out.error(), ec::not_found)) {
        r->Finish(grpc::Status::OK); // removed; or already gone, or never of this kind
      } else {
        r->fail(out.error());
      }
    },
    atom::remove_v, name, record_owner::csi, kind);
  return r;
}

grpc::ServerUnaryReactor* controller_service::DeleteVolume(grpc::CallbackServerContext* ctx,
                                                           const v1::DeleteVolumeRequest* req,
                                                           v1::DeleteVolumeResponse*) {
  return remove_kind(ctx, "DeleteVolume", req->volume_id(), "volume_id", record_kind::volume);
}

grpc::ServerUnaryReactor* controller_service::ControllerPublishVolume(
  grpc::CallbackServerContext*, const v1::ControllerPublishVolumeRequest*,
  v1::ControllerPublishVolumeResponse*) {
  return finish_now(start(stats_, "ControllerPublishVolume"),
                    unimplemented("ControllerPublishVolume"));
}

grpc::ServerUnaryReactor* controller_service::ControllerUnpublishVolume(
  grpc::CallbackServerContext*, const v1::ControllerUnpublishVolumeRequest*,
  v1::ControllerUnpublishVolumeResponse*) {
  return finish_now(start(stats_, "ControllerUnpublishVolume"),
                    unimplemented("ControllerUnpublishVolume"));
}

// ControllerModifyVolume and ControllerExpandVolume are one message, atom::modify: the
// volume's coalescing mailbox merges those that arrive within its window into one
// backend call (docs/design.md, "Expand and modify coalesce into one call"), and
// answers each with the record that call left.
grpc::ServerUnaryReactor* controller_service::ControllerModifyVolume(
  grpc::CallbackServerContext*, const v1::ControllerModifyVolumeRequest* req,
  v1::ControllerModifyVolumeResponse*) {
  auto* r = start(stats_, "ControllerModifyVolume");
  modify_request change;
  auto shape = about_volume(req->volume_id(), "volume_id", {}, decode_modify(*req, change));
  if (auto* refused = refuse(gw_, registry_, r, shape)) {
    return refused;
  }
  if (change.parameters.empty()) {
    // Nothing asked, so nothing changes: OK for a volume that exists.
    return answer_if_volume_exists(gw_, registry_, r, req->volume_id(), grpc::Status::OK);
  }
  gw_.ask(
    registry_, transition_timeout, [r](volume_record&) { r->Finish(grpc::Status::OK); },
    on_error(r), atom::modify_v, req->volume_id(), std::move(change));
  return r;
}

grpc::ServerUnaryReactor* controller_service::ValidateVolumeCapabilities(
  grpc::CallbackServerContext*, const v1::ValidateVolumeCapabilitiesRequest* req,
  v1::ValidateVolumeCapabilitiesResponse* resp) {
  auto* r = start(stats_, "ValidateVolumeCapabilities");
  auto shape = about_volume(req->volume_id(), "volume_id",
                            {{!req->volume_capabilities().empty(), "volume_capabilities"}});
  if (auto* refused = refuse(gw_, registry_, r, shape)) {
    return refused;
  }
  gw_.ask(
    registry_, query_timeout,
    [r, req, resp](volume_record& rec) {
      finish(r, [&] {
        if (rec.kind != record_kind::volume) {
          return unknown_volume(rec.name);
        }
        if (auto st = check_capabilities(req->volume_capabilities(), rec.backend); !st.ok()) {
          resp->set_message(st.error_message());
          return grpc::Status::OK;
        }
        auto* confirmed = resp->mutable_confirmed();
        *confirmed->mutable_volume_context() = req->volume_context();
        *confirmed->mutable_volume_capabilities() = req->volume_capabilities();
        *confirmed->mutable_parameters() = req->parameters();
        return grpc::Status::OK;
      });
    },
    on_error(r), atom::get_v, req->volume_id(), record_owner::csi);
  return r;
}

grpc::Status controller_service::list_volumes(shared_records all, const v1::ListVolumesRequest& req,
                                              v1::ListVolumesResponse& resp) const {
  all.erase(std::remove_if(all.begin(), all.end(),
                           [](const auto& rec) { return owner_of(*rec) != record_owner::csi; }),
            all.end());
  auto recs = select_kind(std::move(all), record_kind::volume);
  page pg;
  auto st = paginate_records(recs, req.max_entries(), req.starting_token(), pg);
  if (!st.ok()) {
    return st;
  }
  resp.mutable_entries()->Reserve(static_cast<int>(pg.end - pg.begin));
  for (auto i = pg.begin; i < pg.end; ++i) {
    auto* entry = resp.add_entries();
    encode_volume(*recs[i], env_, entry->mutable_volume());
    auto* status = entry->mutable_status();
    encode_condition(stats_->health.of(recs[i]->name), status->mutable_volume_condition());
    // LIST_VOLUMES_PUBLISHED_NODES: this node, while the volume is staged or published here
    // (berth has no ControllerPublish: in use on the node is what published means).
    if (!recs[i]->staging_path.empty() || !recs[i]->published.empty()) {
      status->add_published_node_ids(env_.node_id);
    }
  }
  resp.set_next_token(pg.next_token);
  return grpc::Status::OK;
}

grpc::ServerUnaryReactor* controller_service::ListVolumes(grpc::CallbackServerContext*,
                                                          const v1::ListVolumesRequest* req,
                                                          v1::ListVolumesResponse* resp) {
  auto* r = start(stats_, "ListVolumes");
  if (req->max_entries() < 0) {
    return finish_now(r, invalid_argument("max_entries " + std::to_string(req->max_entries())
                                            + " is negative"));
  }
  if (directory_) {
    // The directory holds exactly the committed records the registry would list
    // (docs/design.md, "Lists"): read here, with no actor between.
    finish(r, [&] { return list_volumes(directory_->all(), *req, *resp); });
    return r;
  }
  gw_.ask(
    registry_, query_timeout,
    [this, r, req, resp](shared_records& all) {
      finish(r, [&] { return list_volumes(std::move(all), *req, *resp); });
    },
    on_error(r), atom::list_v, record_owner::csi);
  return r;
}

grpc::ServerUnaryReactor* controller_service::GetCapacity(grpc::CallbackServerContext*,
                                                          const v1::GetCapacityRequest* req,
                                                          v1::GetCapacityResponse* resp) {
  auto* r = start(stats_, "GetCapacity");
  auto it = req->parameters().find("backend");
  auto name = it == req->parameters().end() ? env_.default_backend : it->second;
  auto backend = backends_.find(name);
  if (backend == backends_.end()) {
    return finish_now(r, invalid_argument("parameter backend " + quote_input(name)
                                            + " names no configured backend"));
  }
  // Capacity that cannot serve the capabilities, or that is not at the asked
  // topology, is zero.
  if (!req->volume_capabilities().empty()
      && !check_capabilities(req->volume_capabilities(), name).ok()) {
    resp->set_available_capacity(0);
    return finish_now(r, grpc::Status::OK);
  }
  if (req->has_accessible_topology() && !is_this_node(req->accessible_topology(), env_)) {
    resp->set_available_capacity(0);
    return finish_now(r, grpc::Status::OK);
  }
  auto bytes = backend->second->available_capacity(); // a statvfs: fine on this thread
  if (!bytes) {
    return finish_now(r, to_status(bytes.error()));
  }
  resp->set_available_capacity(
    *bytes > static_cast<uint64_t>(INT64_MAX) ? INT64_MAX : static_cast<int64_t>(*bytes));
  return finish_now(r, grpc::Status::OK);
}

grpc::ServerUnaryReactor* controller_service::ControllerGetCapabilities(
  grpc::CallbackServerContext*, const v1::ControllerGetCapabilitiesRequest*,
  v1::ControllerGetCapabilitiesResponse* resp) {
  using rpc = v1::ControllerServiceCapability::RPC;
  for (auto type :
       {rpc::CREATE_DELETE_VOLUME, rpc::LIST_VOLUMES, rpc::GET_CAPACITY,
        rpc::CREATE_DELETE_SNAPSHOT, rpc::LIST_SNAPSHOTS, rpc::CLONE_VOLUME, rpc::EXPAND_VOLUME,
        rpc::GET_VOLUME, rpc::VOLUME_CONDITION, rpc::SINGLE_NODE_MULTI_WRITER, rpc::MODIFY_VOLUME,
        rpc::LIST_VOLUMES_PUBLISHED_NODES}) {
    resp->add_capabilities()->mutable_rpc()->set_type(type);
  }
  if (advertise_since_1_10_) {
    resp->add_capabilities()->mutable_rpc()->set_type(rpc::GET_SNAPSHOT);
  }
  return finish_now(start(stats_, "ControllerGetCapabilities"), grpc::Status::OK);
}

grpc::ServerUnaryReactor* controller_service::ControllerExpandVolume(
  grpc::CallbackServerContext*, const v1::ControllerExpandVolumeRequest* req,
  v1::ControllerExpandVolumeResponse* resp) {
  auto* r = start(stats_, "ControllerExpandVolume");
  uint64_t bytes = 0;
  auto shape = about_volume(req->volume_id(), "volume_id",
                            {{req->has_capacity_range(), "capacity_range"}},
                            decode_expand(*req, bytes));
  if (auto* refused = refuse(gw_, registry_, r, shape)) {
    return refused;
  }
  bool block = req->has_volume_capability() && req->volume_capability().has_block();
  modify_request grow;
  grow.required_bytes = bytes;
  grow.owner = record_owner::csi;
  gw_.ask(
    registry_, transition_timeout,
    [r, resp, block](volume_record& rec) {
      auto capacity = rec.capacity_bytes;
      resp->set_capacity_bytes(capacity > static_cast<uint64_t>(INT64_MAX)
                                 ? INT64_MAX
                                 : static_cast<int64_t>(capacity));
      // A filesystem must be grown on the node; a raw block device need not.
      resp->set_node_expansion_required(!block);
      r->Finish(grpc::Status::OK);
    },
    on_error(r), atom::modify_v, req->volume_id(), std::move(grow));
  return r;
}

grpc::ServerUnaryReactor* controller_service::ControllerGetVolume(
  grpc::CallbackServerContext*, const v1::ControllerGetVolumeRequest* req,
  v1::ControllerGetVolumeResponse* resp) {
  auto* r = start(stats_, "ControllerGetVolume");
  if (auto* refused = refuse(gw_, registry_, r, about_volume(req->volume_id(), "volume_id"))) {
    return refused;
  }
  gw_.ask(
    registry_, query_timeout,
    [this, r, resp](volume_record& rec) {
      finish(r, [&] {
        if (rec.kind != record_kind::volume) {
          return unknown_volume(rec.name);
        }
        encode_volume(rec, env_, resp->mutable_volume());
        encode_condition(stats_->health.of(rec.name),
                         resp->mutable_status()->mutable_volume_condition());
        return grpc::Status::OK;
      });
    },
    on_error(r), atom::get_v, req->volume_id(), record_owner::csi);
  return r;
}

} // namespace berth::csi
