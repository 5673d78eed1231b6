#pragma once

#include <chrono>
#include <memory>
#include <string>

#include <caf/actor_system.hpp>

#include "actors/actors.hpp"
#include "core/operator_release.hpp"
#include "core/unclaimed_desk.hpp"
#include "core/telemetry/telemetry.hpp"
#include "protocols/gateway/gateway.hpp"
#include "protocols/http/unix_http_server.hpp"

namespace berth {

/// The admin API that berthctl reads (JSON, application/json):
///   GET  /v1/volumes              -> [record...] (core/record_json.hpp, record_shape::full),
///                                    sorted by name
///   GET  /v1/volumes/NAME         -> record; 404 {"error":"..."} if unknown, 400 if NAME is invalid
///   POST /v1/volumes/NAME/resize  {"size_bytes": N}            -> the record after the change
///   POST /v1/volumes/NAME/modify  {"parameters": {"K": "V"}}   -> the record after the change
///   POST /v1/volumes/NAME/release {"id": "MOUNT_ID"}           -> {"volume", "id", "dropped",
///                                    "checked", "unchecked_why"} (operator_release_desk:
///                                    a Docker volume's ID, refused while its container runs)
///   POST /v1/volumes/NAME/snapshot {"name": "SNAP"}           -> the snapshot's record: a
///                                    snapshot of Docker volume NAME, in Docker's namespace
///   GET  /v1/snapshots            -> [record...] Docker's snapshots, sorted by name
///   DELETE /v1/snapshots/SNAP     -> {"removed": "SNAP"}; 404 unless a Docker snapshot
///   GET  /v1/unclaimed            -> {"listed_at", "unclaimed": [NAME...]}: the CSI volumes
///                                    no BerthVolume names (cluster mode, unclaimed_desk)
///   DELETE /v1/unclaimed/NAME     -> {"removed": "NAME"} once the API server confirms that
///                                    no BerthVolume names it; 409 without --kubernetes
///   GET  /v1/volumes/NAME/export, POST /v1/volumes/NAME/import: streams of a tar, and
///   GET  /v1/snapshots/TARGET/diff?base=BASE: the changed ranges of two Docker block
///                                    snapshots; the server hands these to admin_transfers
///                                    (admin_transfer.hpp)
///   GET  /v1/status               -> version, uptime, readiness, volume counts, journal
///                                    (admin::status_json)
///   GET  /v1/operations           -> counts by code and latency histograms per
///                                    (protocol, operation) (admin::operations_json)
/// resize and modify go through the volume's coalescing mailbox like CSI's expand and
/// modify, for any record (owner unset). Errors are {"error":"..."} with a status that
/// matches the berth error code (http_status_of); a malformed body is 400 naming the field.
/// Every request is counted in telemetry::operations as ("admin", route) with its
/// code_of() and its time from arrival to answer; a request for no route counts as
/// ("admin", "other").
class admin_api {
public:
  /// @param stats what status and operations read, and where requests are counted.
  /// @param desk berthctl release's (the dockerd reconciliation); null: release answers 503.
  /// @param unclaimed berthctl unclaimed's (the node agent); null outside the cluster mode:
  ///        its routes answer 409.
  admin_api(caf::actor_system& sys, registry_actor registry, std::shared_ptr<telemetry> stats,
            std::shared_ptr<operator_release_desk> desk = nullptr,
            std::shared_ptr<unclaimed_desk> unclaimed = nullptr);

  /// A handler_fn for unix_http_server; never blocks.
  void handle(const std::string& method, const std::string& target, std::string body,
              reply_fn reply);

  /// Answers one request and counts it once (route, code, latency). Copies share the count.
  class responder {
  public:
    responder(reply_fn reply, std::shared_ptr<telemetry> stats, const char* route);

    /// 200 with a JSON body; counted as "ok".
    void ok(std::string body) const;
    /// `status` with {"error": describe(err)}; counted as code_of(err).
    void fail(unsigned status, const caf::error& err) const;
    /// http_status_of(err) with {"error": describe(err)}.
    void fail(const caf::error& err) const;

  private:
    void answer(unsigned status, std::string body, std::string_view code) const;

    reply_fn reply_;
    std::shared_ptr<telemetry> stats_;
    const char* route_;
    std::chrono::steady_clock::time_point start_;
  };

private:
  void list(responder r);
  void get(std::string name, responder r);
  void modify(std::string name, modify_request req, responder r);
  void release(std::string name, std::string id, responder r);
  void snapshots(responder r);
  void snapshot_volume(std::string volume, std::string snapshot, responder r);
  void remove_snapshot(std::string name, responder r);
  // admin_unclaimed.cpp
  void unclaimed(responder r);
  void remove_unclaimed(std::string name, responder r);

  registry_actor registry_;
  std::shared_ptr<operator_release_desk> desk_;
  std::shared_ptr<unclaimed_desk> unclaimed_;
  std::shared_ptr<telemetry> stats_;
  gateway gw_;
};

/// The HTTP status for an error from the registry: invalid_argument and out_of_range
/// 400, not_found 404, already_exists, in_use, failed_precondition and unsupported 409,
/// resource_exhausted 429, unavailable and aborted 503, timeout 504, anything else 500.
unsigned http_status_of(const caf::error& err);

} // namespace berth
