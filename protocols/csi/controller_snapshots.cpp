// The Controller service's snapshot RPCs (csi_services.hpp): CreateSnapshot and
// DeleteSnapshot go to the registry, ListSnapshots asks it, GetSnapshot reads the
// committed records.

#include "core/text.hpp"
#include "protocols/csi/csi_services.hpp"

namespace berth::csi {

grpc::ServerUnaryReactor* controller_service::CreateSnapshot(grpc::CallbackServerContext* ctx,
                                                             const v1::CreateSnapshotRequest* req,
                                                             v1::CreateSnapshotResponse* resp) {
  auto* r = start(stats_, "CreateSnapshot");
  volume_spec spec;
  request_shape shape;
  shape.required = {{!req->source_volume_id().empty(), "source_volume_id"},
                    {!req->name().empty(), "name"}};
  shape.volume_id = &req->source_volume_id();
  shape.volume_noun = "source volume";
  shape.content = decode_create_snapshot(*req, env_, spec);
  if (auto* refused = refuse(gw_, registry_, r, shape)) {
    return refused;
  }
  spec.from = caller_of(ctx);
  auto created = [r, resp](const volume_record& rec) {
    finish(r, [&] {
      if (rec.kind != record_kind::snapshot) {
        return grpc::Status{grpc::StatusCode::ALREADY_EXISTS,
                            "name " + quote_input(rec.name) + " is taken by a "
                              + to_string(rec.kind)};
      }
      encode_snapshot(rec, resp->mutable_snapshot());
      return grpc::Status::OK;
    });
  };
  send_to_registry<volume_record>(registry_, answer_of<volume_record>(r, std::move(created)),
                                  atom::create_v, req->name(), std::move(spec));
  return r;
}

grpc::ServerUnaryReactor* controller_service::DeleteSnapshot(grpc::CallbackServerContext* ctx,
                                                             const v1::DeleteSnapshotRequest* req,
                                                             v1::DeleteSnapshotResponse*) {
  return remove_kind(ctx, "DeleteSnapshot", req->snapshot_id(), "snapshot_id",
                     record_kind::snapshot);
}

grpc::ServerUnaryReactor* controller_service::ListSnapshots(grpc::CallbackServerContext*,
                                                            const v1::ListSnapshotsRequest* req,
                                                            v1::ListSnapshotsResponse* resp) {
  auto* r = start(stats_, "ListSnapshots");
  if (req->max_entries() < 0) {
    return finish_now(
      r, invalid_argument("max_entries " + std::to_string(req->max_entries()) + " is negative"));
  }
  // A filter naming something that cannot exist matches nothing (not an error).
  if ((!req->snapshot_id().empty() && !may_exist(req->snapshot_id()))
      || (!req->source_volume_id().empty() && !may_exist(req->source_volume_id()))) {
    return finish_now(r, grpc::Status::OK);
  }
  gw_.ask(
    registry_, query_timeout,
    [r, req, resp](shared_records& all) {
      finish(r, [&] {
        auto recs = filter_snapshots(std::move(all), req->snapshot_id(), req->source_volume_id());
        page pg;
        auto st = paginate_records(recs, req->max_entries(), req->starting_token(), pg);
        if (!st.ok()) {
          return st;
        }
        for (auto i = pg.begin; i < pg.end; ++i) {
          encode_snapshot(*recs[i], resp->add_entries()->mutable_snapshot());
        }
        resp->set_next_token(pg.next_token);
        return grpc::Status::OK;
      });
    },
    on_error(r), atom::list_v, record_owner::csi);
  return r;
}

// GetSnapshot (CSI 1.12): a snapshot is cut whole before its record is committed, so one
// that exists is ready; NOT_FOUND otherwise, as for a snapshot of the Docker namespace.
grpc::ServerUnaryReactor* controller_service::GetSnapshot(grpc::CallbackServerContext*,
                                                          const v1::GetSnapshotRequest* req,
                                                          v1::GetSnapshotResponse* resp) {
  auto* r = start(stats_, "GetSnapshot");
  request_shape shape;
  shape.required = {{!req->snapshot_id().empty(), "snapshot_id"}};
  shape.volume_id = &req->snapshot_id();
  shape.volume_noun = "snapshot";
  if (auto* refused = refuse(gw_, registry_, r, shape)) {
    return refused;
  }
  auto answer = [r, resp](const volume_record& rec) {
    finish(r, [&] {
      if (rec.kind != record_kind::snapshot) {
        return unknown_volume(rec.name, "snapshot");
      }
      encode_snapshot(rec, resp->mutable_snapshot());
      return grpc::Status::OK;
    });
  };
  if (directory_) {
    // Read here, as ListVolumes does (docs/design.md, "Lists").
    auto rec = directory_->find(req->snapshot_id());
    if (!rec || owner_of(*rec) != record_owner::csi) {
      return finish_now(r, unknown_volume(req->snapshot_id(), "snapshot"));
    }
    answer(*rec);
    return r;
  }
  gw_.ask(
    registry_, query_timeout, [answer](volume_record& rec) { answer(rec); }, on_error(r),
    atom::get_v, req->snapshot_id(), record_owner::csi);
  return r;
}

} // namespace berth::csi
