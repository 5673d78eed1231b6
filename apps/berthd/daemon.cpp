#include "apps/berthd/daemon.hpp"

// Start-up and shutdown of berthd:
//
//   metrics endpoint (/readyz 503 until ready) ─▶ load state (snapshot + journal, or an ECS import) ─▶ reconcile with mountinfo
//     ─▶ detach loop devices no record stages ─▶ compact (records the boot id)
//     ─▶ persistence + registry actors ─▶ registry ping (it has filled the record directory)
//     ─▶ Docker and admin sockets, CSI gRPC socket ─▶ dockerd reconciliation (protocols/docker/sync/)
//     ─▶ wait for a signal, trimming kept pages meanwhile ─▶ graceful stop

#include <filesystem>
#include <thread>

#include <caf/actor_system.hpp>
#include <caf/actor_system_config.hpp>
#include <caf/typed_event_based_actor.hpp>
#include <spdlog/spdlog.h>

#include "actors/blocking_ask.hpp"
#include "actors/persistence.hpp"
#include "actors/registry.hpp"
#include "apps/berthd/health_sampler.hpp"
#include "apps/berthd/logging.hpp"
#include "apps/berthd/metrics_endpoint.hpp"
#include "apps/berthd/process_setup.hpp"
#include "apps/berthd/servers.hpp"
#include "apps/berthd/socket_activation.hpp"
#include "apps/berthd/state_lock.hpp"
#include "apps/berthd/usage_sampler.hpp"
#include "backends/block_backend.hpp"
#include "backends/executor.hpp"
#include "backends/local_backend.hpp"
#include "backends/mountinfo.hpp"
#include "backends/stall_backend.hpp"
#include "core/build_info.hpp"
#include "core/crash_point.hpp"
#include "core/errors.hpp"
#include "core/free_memory.hpp"
#include "core/telemetry/telemetry.hpp"
#include "persistence/boot_id.hpp"
#include "persistence/ecs_import.hpp"
#include "persistence/file_store.hpp"
#include "persistence/recovery/copy_sweep.hpp"
#include "persistence/recovery/image_sweep.hpp"
#include "persistence/recovery/loop_sweep.hpp"
#include "persistence/recovery/node_sweep.hpp"
#include "persistence/recovery/reconcile.hpp"
#include "protocols/docker/sync/docker_sync.hpp"
#include "protocols/kube/agent/node_agent.hpp"
#include "protocols/kube/kube_factory.hpp"

namespace berth {

namespace {

backend_map make_backends(const daemon_options& opts, std::shared_ptr<loop_stats> loop) {
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
                                               opts.kubelet_dir, std::move(cooldown),
                                               std::move(loop));
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

} // namespace

int run_daemon(const daemon_options& opts) {
  setup_logging(opts.log_format, opts.log_level);
  spdlog::info("berthd {} (revision {}) starting, state in {}, allocator {}", BERTH_VERSION,
               this_build().revision, opts.state_dir, allocator_name());
  raise_open_file_limit();
  // First, before any helper runs: they must not inherit the sockets (nor LISTEN_FDS).
  auto passed = take_passed_sockets();
  if (!passed) {
    spdlog::critical("{}", describe(passed.error()));
    return 1;
  }
  if (auto err = prepare_dirs(opts)) {
    spdlog::critical("{}", describe(err));
    return 1;
  }
  state_lock lock;
  if (auto err = lock.acquire(opts.state_dir)) {
    spdlog::critical("{}", describe(err));
    return 1;
  }
  auto loop = std::make_shared<loop_stats>(); // the telemetry's below; the block backend counts
  auto backends = make_backends(opts, loop);
  // Cluster mode: the API client first, so a bad kubeconfig stops berthd before any work.
  std::unique_ptr<kube::object_api> cluster_api;
  if (opts.kubernetes) {
    auto api = kube::make_object_api(opts.kubeconfig);
    if (!api) {
      spdlog::critical("--kubernetes: cannot set up the Kubernetes API client ({}): {}",
                       opts.kubeconfig.empty() ? "in-cluster" : "--kubeconfig " + opts.kubeconfig,
                       describe(api.error()));
      return 1;
    }
    cluster_api = std::move(*api);
  }
  std::vector<std::string> backend_names;
  for (const auto& [name, b] : backends) {
    backend_names.push_back(name);
  }
  // What berthd counts: the adapters, volumes and persistence count into it, and the
  // metrics endpoint, /readyz and berthctl status read it.
  auto stats = std::make_shared<telemetry>(backend_names);
  stats->loop = std::move(loop);

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
  // Before the loop sweep, so the devices it detaches are no longer mounted.
  auto strays_on_node = sweep_node_mounts(*state, backends, opts.kubelet_dir);
  stats->reconcile_actions.add("stray_unmounted", strays_on_node.unmounted);
  stats->reconcile_actions.add("reconcile_failed", strays_on_node.failed);
  // What exports and imports a crash ended left: unmounted before the loop sweep, which
  // then detaches an import's new image, and the image sweep deletes it.
  std::vector<std::string> transfer_dirs{local_backend::exports_dir_of(opts.state_dir),
                                         admin_transfers::imports_dir_of(opts.state_dir)};
  if (const auto* block = block_backend_of(backends)) {
    transfer_dirs.push_back(block->exports_dir());
  }
  stats->reconcile_actions.add("copy_removed", sweep_transfers(transfer_dirs));
  // Before any stage can attach; logs each detach.
  auto loops = sweep_loop_devices(*state, backends);
  stats->reconcile_actions.add("loop_detached", loops.detached);
  stats->reconcile_actions.add("loop_detach_failed", loops.failed);
  stats->reconcile_actions.add("thawed", loops.thawed);
  stats->reconcile_actions.add("direct_io_on", loops.direct_io_on);
  // After the loop sweep: an image it detached is no longer in use.
  auto images = sweep_block_images(*state, backends, opts.state_dir);
  stats->reconcile_actions.add("image_removed", images.removed);
  // After the unmounts above: a copy with a mount under it is left alone.
  auto copies = sweep_local_copies(*state, opts.state_dir);
  stats->reconcile_actions.add("copy_removed", copies.removed);
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
  pc.compact_after_bytes = opts.compact_after_mb << 20;
  // One copy of each record, from here on: the persistence actor's state, the registry's
  // directory and each volume share it.
  auto durable = share(std::move(*state));
  shared_records records;
  records.reserve(durable.volumes.size());
  for (const auto& [name, rec] : durable.volumes) {
    records.push_back(rec);
  }
  auto persistence = spawn_persistence(sys, st, std::move(durable), pc);
  registry_config rc;
  rc.backends = backends;
  rc.exec = exec;
  rc.persistence = persistence;
  rc.backend_timeout = opts.backend_timeout;
  rc.coalesce_window = opts.coalesce_window;
  rc.stats = stats;
  rc.host_mounts = std::make_shared<const std::set<std::string>>(std::move(*mount_points));
  volume_routes routes{rc.handles, rc.directory};
  auto reg = sys.spawn(registry, std::move(rc), std::move(records));
  if (metrics) {
    metrics->attach(reg, persistence);
  }

  auto sync = make_docker_sync(sys, reg, opts, stats);
  // Made before the servers, whose admin API answers berthctl unclaimed through it; it
  // starts once they serve.
  std::shared_ptr<kube::agent::node_agent> agent;
  if (cluster_api) {
    kube::agent::agent_config ac;
    ac.node = opts.node_id;
    ac.backends = backends;
    ac.stats = stats;
    agent = std::make_shared<kube::agent::node_agent>(sys, reg, std::move(cluster_api), ac);
  }
  servers srv;
  // Docker's List reads the record directory, which the registry fills as it first runs:
  // served before that, a List would miss volumes of the durable state.
  auto up =
    blocking_ask<atom::ok>(sys, reg, std::chrono::seconds(60), "the registry", atom::ping_v);
  // The start's temporaries (the snapshot's text and its parse, the loaded state, the
  // compaction's text) are freed by now; the allocator would keep their pages for its
  // decay time, a third of RSS at 10,000 volumes (docs/benchmarks.md, "RSS at 10,000
  // volumes: one record, and the start's pages given back").
  release_free_memory();
  auto err = up ? start_servers(srv, sys, reg, routes, backends, opts, stats, sync, agent, *passed)
                : std::move(up.error());
  if (err) {
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
  if (agent) {
    agent->start();
  }
  auto all_records = [&sys, reg]() -> caf::expected<std::vector<volume_record>> {
    auto shared = blocking_ask<shared_records>(sys, reg, std::chrono::seconds(10), "the registry",
                                               atom::list_v);
    if (!shared) {
      return shared.error();
    }
    return berth::copies(*shared);
  };
  std::unique_ptr<usage_sampler> usage;
  if (opts.usage_series > 0) {
    usage =
      std::make_unique<usage_sampler>(all_records, stats, opts.usage_series, opts.usage_interval,
                                      used_bytes_at, image_figures_of(block_backend_of(backends)));
    usage->start();
  }
  health_sampler health{all_records, stats, opts.health_interval,
                        block_conditions_of(block_backend_of(backends))};
  health.start();
  stats->ready.serving = true;
  spdlog::info("berthd ready");
  tell_systemd("READY=1");
  test_crash_point("start-serving");
  auto sig = wait_for_signal();
  spdlog::info("signal {} received, stopping", sig);
  tell_systemd("STOPPING=1");
  stats->ready.stopping = true; // /readyz: 503 while stopping
  if (agent) {
    agent->stop(); // before the drain: no new work reaches the volumes from the cluster
  }
  health.stop();
  if (usage) {
    usage->stop();
  }
  stop_gracefully(srv, sys, reg, persistence, *sync, opts);
  if (metrics) {
    metrics->stop();
  }
  exec->stop();
  spdlog::info("berthd stopped");
  return 0;
}

} // namespace berth
