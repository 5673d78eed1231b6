#include "apps/berthd/servers.hpp"

#include <algorithm>

#include <caf/send.hpp>
#include <spdlog/spdlog.h>

#include "actors/blocking_ask.hpp"
#include "core/errors.hpp"
#include "protocols/docker/engine/engine_client.hpp"
#include "protocols/docker/engine/engine_url.hpp"
#include "protocols/docker/sync/registry_seams.hpp"

namespace berth {

namespace {

caf::error start_csi(servers& srv, caf::actor_system& sys, registry_actor reg,
                     const volume_routes& routes, const backend_map& backends,
                     std::shared_ptr<telemetry> stats, const daemon_options& opts) {
  csi_config cfg;
  cfg.stats = std::move(stats);
  cfg.handles = routes.handles;
  cfg.directory = routes.directory;
  cfg.endpoint = opts.csi_endpoint;
  cfg.driver_name = opts.csi_driver_name;
  cfg.node_id = opts.node_id;
  cfg.max_volumes_per_node = opts.max_volumes_per_node;
  cfg.kubelet_dir = opts.kubelet_dir;
  cfg.backends = backends;
  cfg.serve_controller = !opts.kubernetes;
  cfg.advertise_since_1_10 = opts.csi_capabilities != "1.9";
  srv.csi_gateway = std::make_unique<gateway>(sys);
  srv.csi = std::make_unique<csi_server>(*srv.csi_gateway, reg, std::move(cfg));
  if (auto err = srv.csi->start()) {
    return err;
  }
  spdlog::info("CSI driver {} (node {}) listening on {}", opts.csi_driver_name, opts.node_id,
               opts.csi_endpoint);
  return {};
}

/// Serves `path` on the socket systemd passed for it, or binds it; logs which.
caf::error serve(unix_http_server& server, const std::string& path, passed_sockets& passed,
                 const char* what) {
  int fd = passed.claim(path);
  if (auto err = fd < 0 ? server.listen(path) : server.adopt(fd, path)) {
    return err;
  }
  spdlog::info("{} listening on {}{}", what, path, fd < 0 ? "" : " (socket passed by systemd)");
  return {};
}

} // namespace

caf::error start_servers(servers& srv, caf::actor_system& sys, registry_actor reg,
                         const volume_routes& routes, const backend_map& backends,
                         const daemon_options& opts, const std::shared_ptr<telemetry>& stats,
                         std::shared_ptr<operator_release_desk> desk,
                         std::shared_ptr<unclaimed_desk> unclaimed, passed_sockets& passed) {
  if (!opts.docker_socket.empty()) {
    srv.docker = std::make_unique<docker_api>(sys, reg, stats, routes);
    auto* api = srv.docker.get();
    srv.listeners.push_back(std::make_unique<unix_http_server>(
      srv.io,
      [api](const std::string& method, const std::string& target, std::string body,
            reply_fn reply, const caller& from) {
        api->handle(method, target, std::move(body), std::move(reply), from);
      },
      1 << 20, "docker"));
    if (auto err = serve(*srv.listeners.back(), opts.docker_socket, passed,
                         "Docker volume plugin")) {
      return err;
    }
  }
  if (!opts.admin_socket.empty()) {
    srv.admin = std::make_unique<admin_api>(sys, reg, stats, std::move(desk), std::move(unclaimed));
    auto* api = srv.admin.get();
    srv.listeners.push_back(std::make_unique<unix_http_server>(
      srv.io,
      [api](const std::string& method, const std::string& target, std::string body,
            reply_fn reply, const caller&) {
        api->handle(method, target, std::move(body), std::move(reply));
      },
      1 << 16, "admin"));
    // berthctl export and import stream a tar, and snapshot diff its ranges: their
    // requests leave the server after their header.
    admin_transfers::config transfer_cfg;
    transfer_cfg.imports_dir = admin_transfers::imports_dir_of(opts.state_dir);
    transfer_cfg.directory = routes.directory;
    transfer_cfg.backends = backends;
    srv.transfers = std::make_unique<admin_transfers>(sys, reg, stats, transfer_cfg);
    auto* transfers = srv.transfers.get();
    srv.listeners.back()->take_streams(&admin_transfers::routes, [transfers](stream_request r) {
      transfers->take(std::move(r));
    });
    if (auto err = serve(*srv.listeners.back(), opts.admin_socket, passed, "admin API")) {
      return err;
    }
  }
  if (auto err = passed.check_all_claimed()) {
    return err;
  }
  for (int i = 0; i < 2; ++i) {
    srv.threads.emplace_back([&srv] { srv.io.run(); });
  }
  if (!opts.csi_endpoint.empty()) {
    return start_csi(srv, sys, reg, routes, backends, stats, opts);
  }
  return {};
}

void stop_servers(servers& srv, std::chrono::steady_clock::time_point deadline) {
  for (auto& l : srv.listeners) {
    l->stop();
  }
  if (srv.transfers) {
    srv.transfers->stop(); // a stream in flight ends; its client sees it cut short
  }
  if (srv.csi) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
      deadline - std::chrono::steady_clock::now());
    srv.csi->stop(std::max(left, std::chrono::milliseconds(0)));
  }
}

std::shared_ptr<docker_sync::docker_sync> make_docker_sync(caf::actor_system& sys,
                                                           registry_actor reg,
                                                           const daemon_options& opts,
                                                           std::shared_ptr<telemetry> stats) {
  docker_sync::sync_config cfg;
  if (!opts.docker_api.empty()) {
    auto path = docker_engine::parse_api_url(opts.docker_api); // checked by the options
    if (path) {
      cfg.driver.api = std::make_shared<docker_engine::engine_client>(*path);
    }
  }
  cfg.driver.records = docker_sync::make_registry_record_source(sys, reg);
  cfg.driver.sink = docker_sync::make_registry_release_sink(sys, reg);
  cfg.driver.stats = std::move(stats);
  cfg.driver.die_grace = opts.die_grace;
  return std::make_shared<docker_sync::docker_sync>(std::move(cfg));
}

void stop_gracefully(servers& srv, caf::actor_system& sys, registry_actor reg,
                     persistence_actor persistence, docker_sync::docker_sync& sync,
                     const daemon_options& opts) {
  auto deadline = std::chrono::steady_clock::now() + opts.stop_timeout;
  // No new releases: the events stream ends at once; a release already sent is answered
  // by the registry's drain below.
  std::thread sync_stop{[&sync] { sync.stop(); }};
  stop_servers(srv, deadline);
  while (srv.in_flight() > 0 && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  if (auto left = srv.in_flight(); left > 0) {
    spdlog::warn("stopping with {} request(s) still in flight", left);
  }
  auto remaining = [&] {
    return std::chrono::duration_cast<std::chrono::milliseconds>(
      std::max(deadline - std::chrono::steady_clock::now(), std::chrono::steady_clock::duration{
        std::chrono::milliseconds(100)}));
  };
  if (auto idle = blocking_ask<atom::ok>(sys, reg, remaining(), "the volumes", atom::drain_v);
      !idle) {
    spdlog::warn("volumes not idle: {}", describe(idle.error()));
  }
  sync_stop.join(); // bounded: an Engine API call by limits::docker_api_call_timeout
  if (auto flushed = blocking_ask<atom::ok>(sys, persistence, remaining(), "the journal",
                                            atom::flush_v)) {
    spdlog::info("state flushed");
  } else {
    spdlog::error("state flush failed: {}", describe(flushed.error()));
  }
  srv.guard.reset();
  srv.io.stop();
  for (auto& t : srv.threads) {
    t.join();
  }
  caf::anon_send_exit(reg, caf::exit_reason::user_shutdown);
  caf::anon_send_exit(persistence, caf::exit_reason::user_shutdown);
}

} // namespace berth
