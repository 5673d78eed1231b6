#pragma once

#include <string>

#include <caf/actor_system.hpp>

#include "actors/actors.hpp"
#include "protocols/bridge.hpp"
#include "protocols/http/unix_http_server.hpp"

namespace berth {

/// The admin API that berthctl reads (JSON, application/json):
///   GET  /v1/volumes              -> [record...] (core/record_json.hpp, record_shape::full),
///                                    sorted by name
///   GET  /v1/volumes/NAME         -> record; 404 {"error":"..."} if unknown, 400 if NAME is invalid
///   POST /v1/volumes/NAME/resize  {"size_bytes": N}            -> the record after the change
///   POST /v1/volumes/NAME/modify  {"parameters": {"K": "V"}}   -> the record after the change
/// resize and modify go through the volume's coalescing mailbox like CSI's expand and
/// modify, for any record (owner ""). Errors are {"error":"..."} with a status that
/// matches the berth error code (http_status_of); a malformed body is 400 naming the field.
class admin_api {
public:
  admin_api(caf::actor_system& sys, registry_actor registry);

  /// A handler_fn for unix_http_server; never blocks.
  void handle(const std::string& method, const std::string& target, std::string body,
              reply_fn reply);

private:
  void list(reply_fn reply);
  void get(std::string name, reply_fn reply);
  void modify(std::string name, modify_request req, reply_fn reply);

  registry_actor registry_;
  gateway gw_;
};

/// The HTTP status for an error from the registry: invalid_argument and out_of_range
/// 400, not_found 404, already_exists, in_use, failed_precondition and unsupported 409,
/// resource_exhausted 429, unavailable and aborted 503, timeout 504, anything else 500.
unsigned http_status_of(const caf::error& err);

} // namespace berth
