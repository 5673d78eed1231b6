// The controller's RPCs on BerthSnapshots: CreateSnapshot writes the object on the source
// volume's node and waits until that node's agent answers in its status; DeleteSnapshot
// deletes it and waits until the node released it (docs/running.md, "berth on a cluster").

#include <spdlog/spdlog.h>

#include "apps/controller/cluster_services.hpp"
#include "apps/controller/object_rpcs.hpp"
#include "apps/controller/rpc_support.hpp"
#include "core/errors.hpp"
#include "core/text.hpp"
#include "protocols/csi/status.hpp"

namespace berth::controller {

namespace {

using csi::invalid_argument;
using csi::not_found;
using csi::to_status;

/// The node answered the object's spec: it cut the snapshot, or failed to.
bool answered(const kube::snapshot_object& obj) {
  const auto& st = obj.status;
  return st.observed_generation >= obj.generation
         && (st.phase == kube::phase_ready || st.phase == kube::phase_failed);
}

void encode_snapshot(const kube::snapshot_object& obj, v1::Snapshot* out) {
  out->set_snapshot_id(obj.spec.csi_name);
  out->set_source_volume_id(obj.spec.source_volume);
  out->set_size_bytes(clamp_bytes(obj.status.size_bytes));
  if (auto ts = csi::parse_rfc3339(obj.status.creation_time)) {
    *out->mutable_creation_time() = *ts;
  }
  out->set_ready_to_use(obj.status.ready_to_use);
}

} // namespace

grpc::Status cluster_controller::CreateSnapshot(grpc::ServerContext* ctx,
                                                const v1::CreateSnapshotRequest* req,
                                                v1::CreateSnapshotResponse* resp) {
  auto until = deadline_of(ctx);
  if (req->source_volume_id().empty()) {
    return invalid_argument("source_volume_id is required");
  }
  if (req->name().empty()) {
    return invalid_argument("name is required");
  }
  volume_spec decoded;
  if (auto st = csi::decode_create_snapshot(*req, env_, decoded); !st.ok()) {
    return st;
  }
  auto existing = snapshots_.find(req->name(), until);
  if (!existing) {
    return to_status(existing.error());
  }
  kube::snapshot_object obj;
  if (*existing) {
    obj = std::move(**existing);
    if (obj.spec.source_volume != req->source_volume_id()) {
      return {grpc::StatusCode::ALREADY_EXISTS,
              "snapshot " + quote_input(req->name()) + " exists of another volume, "
                + quote_input(obj.spec.source_volume)};
    }
    if (obj.deleting) {
      return {grpc::StatusCode::ABORTED, "snapshot " + quote_input(req->name())
                                           + " is being removed after an earlier attempt failed; retry"};
    }
  } else {
    auto source = store_.find(req->source_volume_id(), until);
    if (!source) {
      return to_status(source.error());
    }
    if (!*source) {
      return not_found("source volume " + quote_input(req->source_volume_id()) + " does not exist");
    }
    kube::snapshot_object_spec spec;
    spec.csi_name = req->name();
    spec.source_volume = req->source_volume_id();
    spec.node = (*source)->spec.node; // a snapshot is cut where its volume is
    spec.parameters = {decoded.parameters.begin(), decoded.parameters.end()};
    spec.parameters["backend"] = decoded.backend;
    auto created = snapshots_.create(spec, until);
    if (!created) {
      return to_status(created.error());
    }
    obj = std::move(*created);
    spdlog::info("CreateSnapshot {}: BerthSnapshot {} of volume {} on node {}",
                 quote_input(req->name()), obj.name, quote_input(spec.source_volume), spec.node);
  }
  kube::snapshot_object cut;
  if (auto st = wait_created(snapshots_, obj, answered, "snapshot", "CreateSnapshot", until, cut);
      !st.ok()) {
    return st;
  }
  encode_snapshot(cut, resp->mutable_snapshot());
  return grpc::Status::OK;
}

grpc::Status cluster_controller::DeleteSnapshot(grpc::ServerContext* ctx,
                                                const v1::DeleteSnapshotRequest* req,
                                                v1::DeleteSnapshotResponse*) {
  auto until = deadline_of(ctx);
  if (req->snapshot_id().empty()) {
    return invalid_argument("snapshot_id is required");
  }
  return delete_and_wait(snapshots_, store_, req->snapshot_id(), "snapshot", "DeleteSnapshot", until);
}

grpc::Status cluster_controller::ListSnapshots(grpc::ServerContext* ctx,
                                               const v1::ListSnapshotsRequest* req,
                                               v1::ListSnapshotsResponse* resp) {
  auto until = deadline_of(ctx);
  if (req->max_entries() < 0) {
    return invalid_argument("max_entries " + std::to_string(req->max_entries()) + " is negative");
  }
  auto wanted = [&](const kube::snapshot_object& obj) {
    // A snapshot not cut yet has no creation_time, which CSI requires; one being deleted
    // is on its way out.
    return !obj.spec.csi_name.empty() && obj.status.phase == kube::phase_ready && !obj.deleting
           && (req->source_volume_id().empty() || obj.spec.source_volume == req->source_volume_id());
  };
  if (!req->snapshot_id().empty()) {
    auto found = snapshots_.find(req->snapshot_id(), until);
    if (!found) {
      return to_status(found.error());
    }
    if (*found && wanted(**found)) {
      encode_snapshot(**found, resp->add_entries()->mutable_snapshot());
    }
    return grpc::Status::OK;
  }
  auto page = snapshots_.list(static_cast<size_t>(req->max_entries()), req->starting_token(), until);
  if (!page) {
    if (!req->starting_token().empty()
        && (is(page.error(), ec::invalid_argument) || is(page.error(), ec::aborted))) {
      return {grpc::StatusCode::ABORTED, "starting_token " + quote_input(req->starting_token())
                                           + " is not valid (expired or not from ListSnapshots): "
                                           + describe(page.error())};
    }
    return to_status(page.error());
  }
  for (const auto& item : page->items) {
    auto obj = kube::parse_snapshot_object(item);
    if (obj && wanted(*obj)) {
      encode_snapshot(*obj, resp->add_entries()->mutable_snapshot());
    }
  }
  resp->set_next_token(page->next);
  return grpc::Status::OK;
}

// GetSnapshot (CSI 1.12): the BerthSnapshot as it is now, cut or not yet (the spec wants a
// snapshot that is not ready yet retrievable); one being deleted no longer exists.
grpc::Status cluster_controller::GetSnapshot(grpc::ServerContext* ctx,
                                             const v1::GetSnapshotRequest* req,
                                             v1::GetSnapshotResponse* resp) {
  auto until = deadline_of(ctx);
  if (req->snapshot_id().empty()) {
    return invalid_argument("snapshot_id is required");
  }
  auto found = snapshots_.find(req->snapshot_id(), until);
  if (!found) {
    return to_status(found.error());
  }
  if (!*found || (*found)->deleting) {
    return not_found("snapshot " + quote_input(req->snapshot_id()) + " does not exist");
  }
  encode_snapshot(**found, resp->mutable_snapshot());
  return grpc::Status::OK;
}

} // namespace berth::controller
