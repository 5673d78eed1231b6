#include "apps/berthd/daemon.hpp"

// Start-up and shutdown of berthd:
//
//   metrics endpoint (/readyz 503 until ready) ─▶ load state (snapshot + journal, or an ECS import) ─▶ reconcile with mountinfo
//     ─▶ detach loop devices no record stages ─▶ compact (records the boot id)
//     ─▶ persistence + registry actors
//     ─▶ Docker and admin sockets, CSI gRPC socket ─▶ dockerd reconciliation (protocols/docker/sync/)
//     ─▶ sigwait ─▶ graceful stop

#include <cerrno>
#include <csignal>
#include <cstring>
#include <filesystem>
#include <thread>

#include <sys/resource.h>

#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <caf/actor_system.hpp>
#include <caf/actor_system_config.hpp>
#include <caf/scoped_actor.hpp>
#include <caf/typed_event_based_actor.hpp>
#include <spdlog/spdlog.h>

#include "actors/persistence.hpp"
#include "actors/registry.hpp"
#include "apps/berthd/logging.hpp"
#include "apps/berthd/metrics_endpoint.hpp"
#include "apps/berthd/state_lock.hpp"
#include "backends/block_backend.hpp"
#include "backends/local_backend.hpp"
#include "backends/mountinfo.hpp"
#include "backends/stall_backend.hpp"
#include "core/build_info.hpp"
#include "core/errors.hpp"
#include "core/telemetry/telemetry.hpp"
#include "persistence/boot_id.hpp"
#include "persistence/crash_point.hpp"
#include "persistence/ecs_import.hpp"
#include "persistence/file_store.hpp"
#include "persistence/recovery/loop_sweep.hpp"
#include "persistence/recovery/reconcile.hpp"
#include "protocols/admin/admin_api.hpp"
#include "protocols/csi/csi_server.hpp"
#include "protocols/docker/docker_api.hpp"
#include "protocols/docker/engine/engine_client.hpp"
#include "protocols/docker/engine/engine_url.hpp"
#include "protocols/docker/sync/docker_sync.hpp"
#include "protocols/docker/sync/registry_seams.hpp"
#include "protocols/gateway/gateway.hpp"
#include "protocols/http/unix_http_server.hpp"

namespace berth {

namespace {

using backend_map = std::map<std::string, std::shared_ptr<backend>>;

backend_map make_backends(const daemon_options& opts) {
  // Helpers (mount.nfs, mkfs, cp, resize2fs) are killed a little before the volume
  // actor gives up on the call, so a call the caller was told timed out is not
  // still working on the volume while its retry runs.
  auto helper_timeout = opts.backend_timeout * 9 / 10;
  std::shared_ptr<backend> local = std::make_shared<local_backend>(opts.state_dir, helper_timeout);
  if (!opts.test_stall_volumes.empty()) {
    spdlog::warn("TEST ONLY: backend calls of {} volume(s) stall {} ms",
                 opts.test_stall_volumes.size(), opts.test_stall.count());
    local = std::make_shared<stall_backend>(
      std::make_unique<local_backend>(opts.state_dir, helper_timeout), opts.test_stall_volumes,
      opts.test_stall);
  }
  block_space space;
  space.block_dir = opts.block_dir;
  space.reserve_path = opts.state_dir + "/state/reserve";
  space.reserve_bytes = uint64_t{opts.journal_reserve_mb} << 20;
  cooldown_config cooldown;
  cooldown.interval = opts.modify_cooldown;
  if (cooldown.interval.count() > 0) {
    spdlog::info("block volumes may be modified once per {} ms (--modify-cooldown-ms)",
                 cooldown.interval.count());
  }
  auto block = std::make_shared<block_backend>(opts.state_dir, helper_timeout, space,
                                               opts.kubelet_dir, std::move(cooldown));
  return {{"local", local}, {"block", block}};
}

/// Loads the state, importing an ECS state file into an empty one.
caf::expected<state_snapshot> load_state(store& st, const daemon_options& opts) {
  auto loaded = st.load();
  if (!loaded) {
    return loaded.error();
  }
  if (opts.import_ecs_state.empty()) {
    return loaded;
  }
  if (!loaded->volumes.empty()) {
    spdlog::warn("--import-ecs-state {} ignored: berth already holds {} volume(s)",
                 opts.import_ecs_state, loaded->volumes.size());
    return loaded;
  }
  auto imported = import_ecs_state(opts.import_ecs_state);
  if (!imported) {
    return imported.error();
  }
  spdlog::info("imported {} volume(s) from ECS state {}", imported->volumes.size(),
               opts.import_ecs_state);
  return imported;
}

caf::error prepare_dirs(const daemon_options& opts) {
  std::error_code err;
  for (auto dir : {opts.state_dir, opts.state_dir + "/volumes"}) {
    std::filesystem::create_directories(dir, err);
    if (err) {
      return make_error(ec::invalid_argument, "cannot create " + dir + ": " + err.message());
    }
  }
  std::filesystem::permissions(opts.state_dir, std::filesystem::perms(0711), err);
  // Docker's mode for its volumes root: reachable, not listable by others.
  std::filesystem::permissions(opts.state_dir + "/volumes", std::filesystem::perms(0701), err);
  return {};
}

/// The sockets berthd serves and the threads that run them.
struct servers {
  boost::asio::io_context io;
  boost::asio::executor_work_guard<boost::asio::io_context::executor_type> guard{
    io.get_executor()};
  std::unique_ptr<docker_api> docker;
  std::unique_ptr<admin_api> admin;
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

caf::error start_csi(servers& srv, caf::actor_system& sys, registry_actor reg,
                     const backend_map& backends, std::shared_ptr<telemetry> stats,
                     const daemon_options& opts) {
  csi_config cfg;
  cfg.stats = std::move(stats);
  cfg.endpoint = opts.csi_endpoint;
  cfg.driver_name = opts.csi_driver_name;
  cfg.node_id = opts.node_id;
  cfg.max_volumes_per_node = opts.max_volumes_per_node;
  cfg.kubelet_dir = opts.kubelet_dir;
  cfg.backends = backends;
  srv.csi_gateway = std::make_unique<gateway>(sys);
  srv.csi = std::make_unique<csi_server>(*srv.csi_gateway, reg, std::move(cfg));
  if (auto err = srv.csi->start()) {
    return err;
  }
  spdlog::info("CSI driver {} (node {}) listening on {}", opts.csi_driver_name, opts.node_id,
               opts.csi_endpoint);
  return {};
}

caf::error start_servers(servers& srv, caf::actor_system& sys, registry_actor reg,
                         const backend_map& backends, const daemon_options& opts,
                         const std::shared_ptr<telemetry>& stats,
                         std::shared_ptr<operator_release_desk> desk) {
  if (!opts.docker_socket.empty()) {
    srv.docker = std::make_unique<docker_api>(sys, reg, stats);
    auto* api = srv.docker.get();
    srv.listeners.push_back(std::make_unique<unix_http_server>(
      srv.io,
      [api](const std::string& method, const std::string& target, std::string body,
            reply_fn reply, const caller& from) {
        api->handle(method, target, std::move(body), std::move(reply), from);
      },
      1 << 20, "docker"));
    if (auto err = srv.listeners.back()->listen(opts.docker_socket)) {
      return err;
    }
    spdlog::info("Docker volume plugin listening on {}", opts.docker_socket);
  }
  if (!opts.admin_socket.empty()) {
    srv.admin = std::make_unique<admin_api>(sys, reg, stats, std::move(desk));
    auto* api = srv.admin.get();
    srv.listeners.push_back(std::make_unique<unix_http_server>(
      srv.io,
      [api](const std::string& method, const std::string& target, std::string body,
            reply_fn reply, const caller&) {
        api->handle(method, target, std::move(body), std::move(reply));
      },
      1 << 16, "admin"));
    if (auto err = srv.listeners.back()->listen(opts.admin_socket)) {
      return err;
    }
    spdlog::info("admin API listening on {}", opts.admin_socket);
  }
  for (int i = 0; i < 2; ++i) {
    srv.threads.emplace_back([&srv] { srv.io.run(); });
  }
  if (!opts.csi_endpoint.empty()) {
    return start_csi(srv, sys, reg, backends, stats, opts);
  }
  return {};
}

/// Stops every server; in-flight CSI calls get until `deadline`.
void stop_servers(servers& srv, std::chrono::steady_clock::time_point deadline) {
  for (auto& l : srv.listeners) {
    l->stop();
  }
  if (srv.csi) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
      deadline - std::chrono::steady_clock::now());
    srv.csi->stop(std::max(left, std::chrono::milliseconds(0)));
  }
}

/// The dockerd reconciliation (docs/design.md, "Mount IDs dockerd forgot"): the Engine
/// API at --docker-api (none when it is empty: berthctl release then drops IDs
/// unchecked), the registry behind its seams.
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

/// Waits for SIGTERM or SIGINT. SIGHUP (blocked in main, like them) is logged and
/// ignored: berthd has no configuration to reload, and a hang-up must not stop it.
int wait_for_signal() {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGTERM);
  sigaddset(&set, SIGINT);
  sigaddset(&set, SIGHUP);
  while (true) {
    int sig = 0;
    if (sigwait(&set, &sig) != 0) {
      continue;
    }
    if (sig != SIGHUP) {
      return sig;
    }
    spdlog::info("SIGHUP received and ignored (berthd reloads nothing; SIGTERM stops it)");
  }
}

/// Raises the soft open-file limit to the hard one: every connection, journal and
/// helper pipe takes a descriptor, and the default soft limit (1024) is low.
void raise_open_file_limit() {
  struct rlimit lim {};
  if (::getrlimit(RLIMIT_NOFILE, &lim) != 0) {
    spdlog::warn("cannot read the open-file limit: {}", std::strerror(errno));
    return;
  }
  if (lim.rlim_cur == lim.rlim_max) {
    spdlog::info("open-file limit {}", static_cast<uint64_t>(lim.rlim_cur));
    return;
  }
  auto before = lim.rlim_cur;
  lim.rlim_cur = lim.rlim_max;
  if (::setrlimit(RLIMIT_NOFILE, &lim) != 0) {
    spdlog::warn("cannot raise the open-file limit from {} to {}: {}",
                 static_cast<uint64_t>(before), static_cast<uint64_t>(lim.rlim_max),
                 std::strerror(errno));
    return;
  }
  spdlog::info("raised the open-file limit from {} to {}", static_cast<uint64_t>(before),
               static_cast<uint64_t>(lim.rlim_max));
}

/// Graceful stop: no new requests, in-flight ones finish, state is flushed.
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
  caf::scoped_actor self{sys};
  auto remaining = [&] {
    return std::chrono::duration_cast<std::chrono::milliseconds>(
      std::max(deadline - std::chrono::steady_clock::now(), std::chrono::steady_clock::duration{
        std::chrono::milliseconds(100)}));
  };
  self->request(reg, remaining(), atom::drain_v)
    .receive([](atom::ok) {},
             [](caf::error& err) { spdlog::warn("volumes not idle: {}", describe(err)); });
  sync_stop.join(); // bounded: an Engine API call by limits::docker_api_call_timeout
  self->request(persistence, remaining(), atom::flush_v)
    .receive([](atom::ok) { spdlog::info("state flushed"); },
             [](caf::error& err) { spdlog::error("state flush failed: {}", describe(err)); });
  srv.guard.reset();
  srv.io.stop();
  for (auto& t : srv.threads) {
    t.join();
  }
  self->send_exit(reg, caf::exit_reason::user_shutdown);
  self->send_exit(persistence, caf::exit_reason::user_shutdown);
}

} // namespace

int run_daemon(const daemon_options& opts) {
  setup_logging(opts.log_format, opts.log_level);
  spdlog::info("berthd {} (revision {}) starting, state in {}", BERTH_VERSION,
               this_build().revision, opts.state_dir);
  raise_open_file_limit();
  if (auto err = prepare_dirs(opts)) {
    spdlog::critical("{}", describe(err));
    return 1;
  }
  state_lock lock;
  if (auto err = lock.acquire(opts.state_dir)) {
    spdlog::critical("{}", describe(err));
    return 1;
  }
  auto backends = make_backends(opts);
  std::vector<std::string> backend_names;
  for (const auto& [name, b] : backends) {
    backend_names.push_back(name);
  }
  // What berthd counts: the adapters, volumes and persistence count into it, and the
  // metrics endpoint, /readyz and berthctl status read it.
  auto stats = std::make_shared<telemetry>(backend_names);

  caf::actor_system_config cfg;
  cfg.add_message_types<caf::id_block::berth>();
  // Work stealing parks idle workers in 10 ms sleeps (CAF 0.17's relaxed polling), which
  // shows up directly as request latency; the sharing policy wakes a worker per message.
  cfg.set("scheduler.policy", caf::atom("sharing"));
  caf::actor_system sys{cfg};
  // Up before the state loads, so probes see "alive, not ready" during a long load.
  std::unique_ptr<metrics_endpoint> metrics;
  if (opts.metrics_address.empty()) {
    spdlog::info("metrics endpoint off (--metrics-address is empty)");
  } else {
    metrics = std::make_unique<metrics_endpoint>(sys, stats);
    if (auto bound = metrics->start(opts.metrics_address); !bound) {
      spdlog::critical("{}", describe(bound.error()));
      return 1;
    }
  }
  auto st = std::make_shared<file_store>(opts.state_dir + "/state",
                                         uint64_t{opts.journal_reserve_mb} << 20);
  test_hold_point("start-loading"); // tests see /readyz while loading (metrics_e2e.sh)
  auto state = load_state(*st, opts);
  if (!state) {
    spdlog::critical("cannot load state: {}", describe(state.error()));
    return 1;
  }
  test_crash_point("start-loaded");
  auto mount_points = read_mount_points();
  if (!mount_points) {
    spdlog::critical("cannot read mountinfo: {}", describe(mount_points.error()));
    return 1;
  }
  // The boot decision is made here and made durable by the compaction below; the
  // host work (remounts, restages) runs in each volume's actor, so a dead server
  // never delays start-up (each volume logs what it does).
  auto report = reconcile_boot(*state, read_boot_id());
  auto strays = unmount_strays(*state, *mount_points, opts.state_dir + "/volumes",
                               *backends.at("local"));
  stats->reconcile_actions.add("cleared", report.cleared);
  stats->reconcile_actions.add("stray_unmounted", strays);
  spdlog::info("{} volume(s) loaded: {}, {} cleared, {} stray mount(s) detached",
               state->volumes.size(), report.new_boot ? "new boot" : "same boot",
               report.cleared, strays);
  // Before any stage can attach; logs each detach.
  auto loops = sweep_loop_devices(*state, backends);
  stats->reconcile_actions.add("loop_detached", loops.detached);
  stats->reconcile_actions.add("loop_detach_failed", loops.failed);
  test_crash_point("start-reconciled");
  // Makes the boot decision durable; a crash at any step of it is safe (file_store).
  auto compact_started = std::chrono::steady_clock::now();
  if (auto err = st->compact(*state)) {
    spdlog::critical("cannot write state: {}", describe(err));
    return 1;
  }
  stats->persistence.snapshot_duration.observe(
    std::chrono::duration<double>(std::chrono::steady_clock::now() - compact_started).count());
  test_crash_point("start-compacted");
  stats->ready.state_loaded = true;

  auto exec = std::make_shared<executor>(opts.executor_threads, 1 << 16);
  persistence_config pc;
  pc.stats = stats;
  auto persistence = spawn_persistence(sys, st, *state, pc);
  registry_config rc;
  rc.backends = backends;
  rc.exec = exec;
  rc.persistence = persistence;
  rc.backend_timeout = opts.backend_timeout;
  rc.coalesce_window = opts.coalesce_window;
  rc.stats = stats;
  rc.host_mounts = std::make_shared<const std::set<std::string>>(std::move(*mount_points));
  std::vector<volume_record> records;
  records.reserve(state->volumes.size());
  for (auto& [name, rec] : state->volumes) {
    records.push_back(std::move(rec));
  }
  state->volumes.clear();
  auto reg = sys.spawn(registry, std::move(rc), std::move(records));
  if (metrics) {
    metrics->attach(reg, persistence);
  }

  auto sync = make_docker_sync(sys, reg, opts, stats);
  servers srv;
  if (auto err = start_servers(srv, sys, reg, backends, opts, stats, sync)) {
    spdlog::critical("{}", describe(err));
    stop_servers(srv, std::chrono::steady_clock::now());
    srv.guard.reset();
    srv.io.stop();
    for (auto& t : srv.threads) {
      t.join();
    }
    caf::anon_send_exit(reg, caf::exit_reason::user_shutdown);
    caf::anon_send_exit(persistence, caf::exit_reason::user_shutdown);
    exec->stop();
    return 1;
  }
  // Once the state has loaded and every volume was spawned (each reconciles first): its
  // first pass queues behind those reconciliations, and never delays serving.
  sync->start();
  stats->ready.serving = true;
  spdlog::info("berthd ready");
  test_crash_point("start-serving");
  auto sig = wait_for_signal();
  spdlog::info("signal {} received, stopping", sig);
  stats->ready.stopping = true; // /readyz: 503 while stopping
  stop_gracefully(srv, sys, reg, persistence, *sync, opts);
  if (metrics) {
    metrics->stop();
  }
  exec->stop();
  spdlog::info("berthd stopped");
  return 0;
}

} // namespace berth
