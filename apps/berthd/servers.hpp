#pragma once

// The sockets berthd serves (Docker plugin, admin, CSI), the threads that run them, the
// dockerd reconciliation beside them, and the graceful stop of all of it. run_daemon
// (daemon.cpp) starts them once the state is loaded.

#include <chrono>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <caf/actor_system.hpp>

#include "actors/actors.hpp"
#include "apps/berthd/daemon_options.hpp"
#include "apps/berthd/socket_activation.hpp"
#include "backends/backend.hpp"
#include "core/operator_release.hpp"
#include "core/unclaimed_desk.hpp"
#include "core/telemetry/telemetry.hpp"
#include "protocols/admin/admin_api.hpp"
#include "protocols/admin/admin_transfer.hpp"
#include "protocols/csi/csi_server.hpp"
#include "protocols/docker/docker_api.hpp"
#include "protocols/docker/sync/docker_sync.hpp"
#include "protocols/gateway/gateway.hpp"
#include "protocols/http/unix_http_server.hpp"

namespace berth {

using backend_map = std::map<std::string, std::shared_ptr<backend>>;

/// The sockets berthd serves and the threads that run them.
struct servers {
  boost::asio::io_context io;
  boost::asio::executor_work_guard<boost::asio::io_context::executor_type> guard{
    io.get_executor()};
  std::unique_ptr<docker_api> docker;
  std::unique_ptr<admin_api> admin;
  std::unique_ptr<admin_transfers> transfers; ///< berthctl export and import
  std::unique_ptr<gateway> csi_gateway;
  std::unique_ptr<csi_server> csi;
  std::vector<std::unique_ptr<unix_http_server>> listeners;
  std::vector<std::thread> threads;

  size_t in_flight() const {
    size_t n = 0;
    for (const auto& l : listeners) {
      n += l->in_flight();
    }
    return n;
  }
};

/// Starts the Docker plugin and admin sockets (each unless its path is empty: on the socket
/// systemd passed for its path, else bound here) and the CSI server (with --csi-endpoint);
/// `desk` answers berthctl release, `unclaimed` berthctl unclaimed (null without
/// --kubernetes); `routes` let the Docker plugin and CSI go around the registry. A passed
/// socket no flag names is an error.
caf::error start_servers(servers& srv, caf::actor_system& sys, registry_actor reg,
                         const volume_routes& routes, const backend_map& backends,
                         const daemon_options& opts, const std::shared_ptr<telemetry>& stats,
                         std::shared_ptr<operator_release_desk> desk,
                         std::shared_ptr<unclaimed_desk> unclaimed, passed_sockets& passed);

/// Stops every server; in-flight CSI calls get until `deadline`.
void stop_servers(servers& srv, std::chrono::steady_clock::time_point deadline);

/// The dockerd reconciliation (docs/design.md, "Mount IDs dockerd forgot"): the Engine
/// API at --docker-api (none when it is empty: berthctl release then drops IDs
/// unchecked), the registry behind its seams.
std::shared_ptr<docker_sync::docker_sync> make_docker_sync(caf::actor_system& sys,
                                                           registry_actor reg,
                                                           const daemon_options& opts,
                                                           std::shared_ptr<telemetry> stats);

/// Graceful stop: no new requests, in-flight ones finish (until --stop-timeout), the
/// volumes drain, state is flushed, the actors exit.
void stop_gracefully(servers& srv, caf::actor_system& sys, registry_actor reg,
                     persistence_actor persistence, docker_sync::docker_sync& sync,
                     const daemon_options& opts);

} // namespace berth
