#pragma once

// The metrics endpoint's requests (tcp_http_server on --metrics-address):
//
//   GET /metrics  the exposition page (collect.hpp), Content-Type metrics::content_type
//   GET /healthz  200 "ok" when the registry and persistence actors answer within
//                 limits::health_answer_timeout, else 503 naming the one that did not;
//                 200 "loading" before they exist (the state is still loading)
//   GET /readyz   200 "ok", or 503 with not_ready_reason() (state loading, volumes
//                 reconciling, sockets not accepting)
//
// Another path is 404, another method 405. Nothing here blocks an I/O thread: the
// page is read from atomics, and the health requests go through a gateway.

#include <chrono>
#include <memory>
#include <mutex>
#include <optional>
#include <string>

#include <caf/actor_system.hpp>

#include "actors/actors.hpp"
#include "core/limits.hpp"
#include "core/telemetry/telemetry.hpp"
#include "protocols/gateway/gateway.hpp"
#include "protocols/http/http_handler.hpp"

namespace berth {

/// Serves /metrics, /healthz and /readyz from the telemetry and the actors' answers.
class metrics_api {
public:
  /// @param timeout how long /healthz waits for each actor.
  metrics_api(caf::actor_system& sys, std::shared_ptr<const telemetry> stats,
              std::chrono::milliseconds timeout = limits::health_answer_timeout);

  /// Gives /healthz the actors to ask, once they are spawned. Thread-safe.
  void attach(registry_actor registry, persistence_actor persistence);

  /// A handler_fn for tcp_http_server; never blocks.
  void handle(const std::string& method, const std::string& target, reply_fn reply);

private:
  void healthz(reply_fn reply);

  std::shared_ptr<const telemetry> stats_;
  std::chrono::milliseconds timeout_;
  gateway gw_;
  std::mutex mtx_; ///< guards actors_
  struct actors {
    registry_actor registry;
    persistence_actor persistence;
  };
  std::optional<actors> actors_;
};

} // namespace berth
