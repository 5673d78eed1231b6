#pragma once

// berthd's metrics endpoint (--metrics-address): the TCP server and the /metrics,
// /healthz, /readyz handler on an io_context and thread of their own, so scrapes and
// probes answer while the state loads (before any actor exists) and however busy the
// Docker, admin and CSI sockets are.

#include <memory>
#include <string>
#include <thread>

#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <caf/actor_system.hpp>
#include <caf/expected.hpp>

#include "actors/actors.hpp"
#include "core/telemetry/telemetry.hpp"
#include "protocols/http/tcp_http_server.hpp"
#include "protocols/metrics/metrics_api.hpp"

namespace berth {

/// Serves /metrics, /healthz and /readyz on one TCP address until stop().
class metrics_endpoint {
public:
  metrics_endpoint(caf::actor_system& sys, std::shared_ptr<const telemetry> stats);

  /// Stops (see stop()).
  ~metrics_endpoint();

  metrics_endpoint(const metrics_endpoint&) = delete;
  metrics_endpoint& operator=(const metrics_endpoint&) = delete;

  /// Binds `address` and starts serving; logs and returns the address bound
  /// ("metrics listening on 127.0.0.1:40123"). The error names the address and
  /// --metrics-address.
  caf::expected<std::string> start(const std::string& address);

  /// Gives /healthz the actors once they are spawned. Thread-safe.
  void attach(registry_actor registry, persistence_actor persistence);

  /// Stops accepting, lets the answers in flight go out, and joins the thread.
  /// Idempotent.
  void stop();

private:
  boost::asio::io_context io_;
  boost::asio::executor_work_guard<boost::asio::io_context::executor_type> guard_;
  metrics_api api_;
  tcp_http_server server_;
  std::thread thread_;
};

} // namespace berth
