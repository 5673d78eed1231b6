// berth-bench csi: load on berthd's CSI socket, as the CSI sidecars and kubelet make it.
//
//   phase 1, S seconds: C clients, each on its own connection, loop
//            CreateVolume(<prefix>-<run>-<k>-<seq>, 1 GiB) then DeleteVolume(id)
//   setup:   each client creates <prefix>-<run>-node-<k> and stages it once
//            (block backend: loop device + mkfs; not timed in the pairs);
//            --one-volume: only client 0 does, and every client uses that volume
//   phase 2, S seconds: each client loops NodePublish(fresh target) then
//            NodeUnpublish(same target): a bind mount of its staging dir
//   teardown: unstage and delete the node volumes, remove the work dir
//
// Readable lines, then one JSON object as the last line.

#include "apps/bench/csi_mode.hpp"

#include <atomic>
#include <cerrno>
#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include <unistd.h>

#include "apps/bench/common.hpp"
#include "apps/bench/csi_client.hpp"
#include "apps/bench/latency.hpp"
#include "apps/bench/plugin_client.hpp"
#include "core/json_text.hpp"

namespace berth::bench {

namespace {

namespace v1 = ::csi::v1;

constexpr int64_t volume_bytes = 1024ll * 1024 * 1024;

v1::CreateVolumeRequest create_request(const csi_options& opt, const std::string& name) {
  return bench::create_request(name, volume_bytes, opt.backend);
}

/// What one client measured in one phase.
struct phase_stats {
  latency_recorder first;  ///< Create or Publish
  latency_recorder second; ///< Delete or Unpublish
  latency_recorder pair;
};

/// The figures of one phase, all clients merged.
struct phase_result {
  phase_stats all;
  double seconds = 0;
  uint64_t errors = 0;
};

void print_line(const char* what, latency_recorder& rec, double seconds) {
  std::printf("%-18s ops=%-8zu ops/s=%-10.1f p50=%.3f ms  p99=%.3f ms  p999=%.3f ms  max=%.3f ms\n",
              what, rec.count(), seconds > 0 ? static_cast<double>(rec.count()) / seconds : 0.0,
              rec.percentile(50), rec.percentile(99), rec.percentile(99.9), rec.max());
}

/// Runs `body(k, stats, stop)` on C threads for opt.seconds; merges the stats.
template <class Body>
phase_result run_phase(const csi_options& opt, error_log& errors, Body body) {
  std::atomic<bool> stop{false};
  std::vector<phase_stats> stats(static_cast<size_t>(opt.concurrency));
  std::vector<std::thread> threads;
  auto before = errors.count();
  auto start = bench_clock::now();
  for (long k = 0; k < opt.concurrency; ++k) {
    threads.emplace_back([&, k] { body(k, stats[static_cast<size_t>(k)], stop); });
  }
  std::this_thread::sleep_for(std::chrono::duration<double>(opt.seconds));
  stop = true;
  for (auto& th : threads) {
    th.join();
  }
  phase_result r;
  r.seconds = elapsed_ms(start, bench_clock::now()) / 1000.0;
  for (auto& s : stats) {
    r.all.first.merge(s.first);
    r.all.second.merge(s.second);
    r.all.pair.merge(s.pair);
  }
  r.errors = errors.count() - before;
  return r;
}

/// True when something is mounted at or below `dir` (then it must not be deleted).
bool mounted_below(const std::string& dir) {
  std::ifstream in("/proc/self/mountinfo");
  std::string line;
  while (std::getline(in, line)) {
    std::string f[5];
    std::istringstream fields(line);
    for (auto& x : f) {
      fields >> x;
    }
    if (f[4] == dir || f[4].compare(0, dir.size() + 1, dir + "/") == 0) {
      return true;
    }
  }
  return false;
}

double per_s(size_t n, double seconds) {
  return seconds > 0 ? static_cast<double>(n) / seconds : 0.0;
}

} // namespace

int run_csi(const csi_options& opt) {
  auto run_id = std::to_string(::getpid()) + "-" +
                std::to_string(bench_clock::now().time_since_epoch().count() % 1000000007);
  std::string tmpl = opt.work_dir + "/berth-bench-csi.XXXXXX";
  std::vector<char> buf(tmpl.begin(), tmpl.end());
  buf.push_back('\0');
  if (::mkdtemp(buf.data()) == nullptr) {
    std::fprintf(stderr, "berth-bench: cannot make a work dir under %s: %s\n",
                 opt.work_dir.c_str(), std::strerror(errno));
    return 1;
  }
  std::string work = buf.data();
  std::filesystem::create_directories(work + "/staging");
  std::filesystem::create_directories(work + "/targets");

  // -- check the endpoint ------------------------------------------------------------
  if (v1::ControllerGetCapabilitiesResponse caps; !controller_capabilities(opt.endpoint, caps)) {
    std::filesystem::remove_all(work);
    return 1;
  }
  std::vector<std::unique_ptr<csi_client>> clients;
  for (long k = 0; k < opt.concurrency; ++k) {
    clients.push_back(std::make_unique<csi_client>(opt.endpoint, opt.node_endpoint));
  }

  // -- phase 1: CreateVolume + DeleteVolume -------------------------------------------
  error_log errors;
  std::vector<std::vector<std::string>> undeleted(static_cast<size_t>(opt.concurrency));
  auto create_delete = run_phase(opt, errors, [&](long k, phase_stats& s,
                                                  const std::atomic<bool>& stop) {
    auto& c = *clients[static_cast<size_t>(k)];
    auto base = opt.prefix + "-" + run_id + "-" + std::to_string(k) + "-";
    for (uint64_t seq = 0; !stop.load(std::memory_order_relaxed); ++seq) {
      auto name = base + std::to_string(seq);
      v1::CreateVolumeResponse created;
      auto t0 = bench_clock::now();
      auto err = rpc(*c.controller, &v1::Controller::Stub::CreateVolume,
                     create_request(opt, name), created);
      auto t1 = bench_clock::now();
      if (!err.empty()) {
        errors.add("CreateVolume " + name + ": " + err);
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
        continue;
      }
      s.first.add(elapsed_ms(t0, t1));
      v1::DeleteVolumeRequest del;
      del.set_volume_id(created.volume().volume_id());
      v1::DeleteVolumeResponse deleted;
      err = rpc(*c.controller, &v1::Controller::Stub::DeleteVolume, del, deleted);
      auto t2 = bench_clock::now();
      if (!err.empty()) {
        errors.add("DeleteVolume " + del.volume_id() + ": " + err);
        undeleted[static_cast<size_t>(k)].push_back(del.volume_id());
        continue;
      }
      s.second.add(elapsed_ms(t1, t2));
      s.pair.add(elapsed_ms(t0, t2));
    }
  });

  // -- setup of phase 2: one staged volume per client, or one for all ---------------------
  error_log setup_errors;
  std::vector<std::string> node_ids(static_cast<size_t>(opt.concurrency));
  std::vector<std::string> stagings(static_cast<size_t>(opt.concurrency));
  long staged_volumes = opt.one_volume ? 1 : opt.concurrency;
  auto setup_start = bench_clock::now();
  parallel_for(staged_volumes, staged_volumes, [&](long, long k) {
    auto& c = *clients[static_cast<size_t>(k)];
    auto name = opt.prefix + "-" + run_id + "-node-" + std::to_string(k);
    v1::CreateVolumeResponse created;
    auto err = rpc(*c.controller, &v1::Controller::Stub::CreateVolume, create_request(opt, name),
                   created);
    if (!err.empty()) {
      setup_errors.add("CreateVolume " + name + ": " + err);
      return;
    }
    auto id = created.volume().volume_id();
    node_ids[static_cast<size_t>(k)] = id;
    auto staging = work + "/staging/" + std::to_string(k);
    std::filesystem::create_directories(staging);
    v1::NodeStageVolumeRequest stage;
    stage.set_volume_id(id);
    stage.set_staging_target_path(staging);
    *stage.mutable_volume_capability() = mount_capability();
    v1::NodeStageVolumeResponse staged;
    err = rpc(*c.node, &v1::Node::Stub::NodeStageVolume, stage, staged);
    if (!err.empty()) {
      setup_errors.add("NodeStageVolume " + id + ": " + err);
      return;
    }
    stagings[static_cast<size_t>(k)] = staging;
  });
  for (long k = staged_volumes; k < opt.concurrency; ++k) {
    node_ids[static_cast<size_t>(k)] = node_ids[0];
    stagings[static_cast<size_t>(k)] = stagings[0];
  }
  double setup_s = elapsed_ms(setup_start, bench_clock::now()) / 1000.0;

  // -- phase 2: NodePublish + NodeUnpublish ------------------------------------------------
  std::vector<std::vector<std::string>> unpublished(static_cast<size_t>(opt.concurrency));
  phase_result publish_unpublish;
  if (setup_errors.count() == 0) {
    publish_unpublish = run_phase(opt, errors, [&](long k, phase_stats& s,
                                                   const std::atomic<bool>& stop) {
      auto& c = *clients[static_cast<size_t>(k)];
      auto& id = node_ids[static_cast<size_t>(k)];
      auto base = work + "/targets/" + std::to_string(k) + "-";
      for (uint64_t seq = 0; !stop.load(std::memory_order_relaxed); ++seq) {
        v1::NodePublishVolumeRequest pub;
        pub.set_volume_id(id);
        pub.set_staging_target_path(stagings[static_cast<size_t>(k)]);
        pub.set_target_path(base + std::to_string(seq));
        *pub.mutable_volume_capability() = mount_capability();
        v1::NodePublishVolumeResponse published;
        auto t0 = bench_clock::now();
        auto err = rpc(*c.node, &v1::Node::Stub::NodePublishVolume, pub, published);
        auto t1 = bench_clock::now();
        if (!err.empty()) {
          errors.add("NodePublishVolume " + id + " at " + pub.target_path() + ": " + err);
          unpublished[static_cast<size_t>(k)].push_back(pub.target_path());
          std::this_thread::sleep_for(std::chrono::milliseconds(1));
          continue;
        }
        s.first.add(elapsed_ms(t0, t1));
        v1::NodeUnpublishVolumeRequest unpub;
        unpub.set_volume_id(id);
        unpub.set_target_path(pub.target_path());
        v1::NodeUnpublishVolumeResponse done;
        err = rpc(*c.node, &v1::Node::Stub::NodeUnpublishVolume, unpub, done);
        auto t2 = bench_clock::now();
        if (!err.empty()) {
          errors.add("NodeUnpublishVolume " + id + " at " + pub.target_path() + ": " + err);
          unpublished[static_cast<size_t>(k)].push_back(pub.target_path());
          continue;
        }
        s.second.add(elapsed_ms(t1, t2));
        s.pair.add(elapsed_ms(t0, t2));
      }
    });
  }
  std::optional<double> rss;
  std::optional<double> hwm;
  if (opt.pid > 0) {
    rss = read_rss_mb(opt.pid);
    hwm = read_rss_mb(opt.pid, "VmHWM");
  }

  // -- teardown: best effort, every failure counted ---------------------------------------
  error_log teardown_errors;
  parallel_for(opt.concurrency, opt.concurrency, [&](long, long k) {
    auto& c = *clients[static_cast<size_t>(k)];
    auto& id = node_ids[static_cast<size_t>(k)];
    for (auto& target : unpublished[static_cast<size_t>(k)]) {
      v1::NodeUnpublishVolumeRequest unpub;
      unpub.set_volume_id(id);
      unpub.set_target_path(target);
      v1::NodeUnpublishVolumeResponse done;
      if (auto err = rpc(*c.node, &v1::Node::Stub::NodeUnpublishVolume, unpub, done); !err.empty()) {
        teardown_errors.add("NodeUnpublishVolume " + target + ": " + err);
      }
    }
  });
  // Every target is gone before a volume is unstaged: with --one-volume the clients past
  // staged_volumes published volume 0, which its own client tears down.
  parallel_for(opt.concurrency, opt.concurrency, [&](long, long k) {
    auto& c = *clients[static_cast<size_t>(k)];
    auto& id = node_ids[static_cast<size_t>(k)];
    bool owns_volume = k < staged_volumes;
    if (owns_volume && !stagings[static_cast<size_t>(k)].empty()) {
      v1::NodeUnstageVolumeRequest unstage;
      unstage.set_volume_id(id);
      unstage.set_staging_target_path(stagings[static_cast<size_t>(k)]);
      v1::NodeUnstageVolumeResponse done;
      if (auto err = rpc(*c.node, &v1::Node::Stub::NodeUnstageVolume, unstage, done);
          !err.empty()) {
        teardown_errors.add("NodeUnstageVolume " + id + ": " + err);
      }
    }
    auto leftovers = undeleted[static_cast<size_t>(k)];
    if (owns_volume && !id.empty()) {
      leftovers.push_back(id);
    }
    for (auto& vol : leftovers) {
      v1::DeleteVolumeRequest del;
      del.set_volume_id(vol);
      v1::DeleteVolumeResponse done;
      if (auto err = rpc(*c.controller, &v1::Controller::Stub::DeleteVolume, del, done);
          !err.empty()) {
        teardown_errors.add("DeleteVolume " + vol + ": " + err);
      }
    }
  });
  if (mounted_below(work)) {
    teardown_errors.add("something is still mounted below " + work + "; left in place");
  } else {
    std::error_code ec;
    std::filesystem::remove_all(work, ec);
  }

  // -- report ----------------------------------------------------------------------------
  auto& cd = create_delete.all;
  auto& pu = publish_unpublish.all;
  std::printf("csi: %s, %ld clients, %.2f s create/delete, %.2f s publish/unpublish\n",
              opt.endpoint.c_str(), opt.concurrency, create_delete.seconds,
              publish_unpublish.seconds);
  print_line("create", cd.first, create_delete.seconds);
  print_line("delete", cd.second, create_delete.seconds);
  print_line("create+delete", cd.pair, create_delete.seconds);
  std::printf("setup: %ld volumes created and staged in %.2f s, %" PRIu64 " errors\n",
              staged_volumes, setup_s, setup_errors.count());
  print_line("publish", pu.first, publish_unpublish.seconds);
  print_line("unpublish", pu.second, publish_unpublish.seconds);
  print_line("publish+unpublish", pu.pair, publish_unpublish.seconds);
  auto total_errors = errors.count() + setup_errors.count() + teardown_errors.count();
  std::printf("errors: %" PRIu64 " (create/delete %" PRIu64 ", publish/unpublish %" PRIu64
              ", setup %" PRIu64 ", teardown %" PRIu64 ")\n",
              total_errors, create_delete.errors, publish_unpublish.errors, setup_errors.count(),
              teardown_errors.count());
  if (opt.pid > 0) {
    if (rss) {
      std::printf("rss: pid %ld VmRSS %.1f MB, VmHWM %.1f MB\n", opt.pid, *rss, hwm.value_or(0.0));
    } else {
      std::printf("rss: cannot read /proc/%ld/status\n", opt.pid);
    }
  }
  std::printf(
    "{\"mode\":\"csi\",\"endpoint\":%s,\"node_endpoint\":%s,"
    "\"create_delete_pairs_per_s\":%.1f,\"create_delete_pairs\":%zu,"
    "\"create_delete_p50_ms\":%.3f,\"create_delete_p99_ms\":%.3f,"
    "\"create_delete_max_ms\":%.3f,\"create_p99_ms\":%.3f,\"delete_p99_ms\":%.3f,"
    "\"publish_unpublish_pairs_per_s\":%.1f,\"publish_unpublish_pairs\":%zu,"
    "\"publish_unpublish_p50_ms\":%.3f,\"publish_unpublish_p99_ms\":%.3f,"
    "\"publish_unpublish_max_ms\":%.3f,\"publish_p99_ms\":%.3f,"
    "\"unpublish_p99_ms\":%.3f,\"setup_s\":%.2f,\"errors\":%" PRIu64
    ",\"concurrency\":%ld,\"one_volume\":%s,\"seconds\":%.2f",
    json_quote(opt.endpoint).c_str(), json_quote(opt.node_endpoint).c_str(),
    per_s(cd.pair.count(), create_delete.seconds), cd.pair.count(), cd.pair.percentile(50),
    cd.pair.percentile(99), cd.pair.max(), cd.first.percentile(99), cd.second.percentile(99),
    per_s(pu.pair.count(), publish_unpublish.seconds), pu.pair.count(), pu.pair.percentile(50),
    pu.pair.percentile(99), pu.pair.max(), pu.first.percentile(99), pu.second.percentile(99),
    setup_s, total_errors, opt.concurrency, opt.one_volume ? "true" : "false", opt.seconds);
  if (rss) {
    std::printf(",\"rss_mb\":%.1f", *rss);
  }
  std::printf("}\n");
  std::fflush(stdout);
  if (setup_errors.count() > 0) {
    return 1;
  }
  return total_errors == 0 ? 0 : 2;
}

} // namespace berth::bench
