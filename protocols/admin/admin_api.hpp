#pragma once

#include <string>

#include <caf/actor_system.hpp>

#include "actors/actors.hpp"
#include "protocols/bridge.hpp"
#include "protocols/http/unix_http_server.hpp"

namespace berth {

/// The admin API that berthctl reads (JSON, application/json):
///   GET /v1/volumes       -> [record...] (core/record_json.hpp shape), sorted by name
///   GET /v1/volumes/NAME  -> record; 404 {"error":"..."} if unknown, 400 if NAME is invalid
/// Errors are {"error":"..."} with a status that matches the berth error code.
class admin_api {
public:
  admin_api(caf::actor_system& sys, registry_actor registry);

  /// A handler_fn for unix_http_server; never blocks.
  void handle(const std::string& method, const std::string& target, std::string body,
              reply_fn reply);

private:
  registry_actor registry_;
  gateway gw_;
};

/// The HTTP status for an error from the registry (not_found -> 404, ...).
unsigned http_status_of(const caf::error& err);

} // namespace berth
