// berth-bench docker: Mount+Unmount pairs against the Docker plugin socket.
//
//   setup: List, then Create the missing `<prefix>-<i>` volumes with C clients
//   run:   C clients, each on its own keep-alive connection; client k walks the
//          volumes k, k+C, k+2C, ... doing Mount(fresh ID) then Unmount(same ID)
//   --stalled NAME: one more client loops on NAME; its figures are reported apart
//   --report-every S: a line every S seconds (report_loop); --mixed: Create+Remove churn

#include <atomic>
#include <cinttypes>
#include <cstdio>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include <unistd.h>

#include "apps/bench/common.hpp"
#include "apps/bench/latency.hpp"
#include "apps/bench/plugin_client.hpp"
#include "apps/bench/process_report.hpp"
#include "core/json_text.hpp"

namespace berth::bench {

namespace {

/// What one client measured.
struct client_stats {
  latency_recorder mount;
  latency_recorder unmount;
  latency_recorder pair;
  /// The pairs since the last --report-every line, taken by the reporter.
  std::mutex interval_mtx;
  latency_recorder interval;
};

/// With --mixed, every 32nd round also Creates and Removes a fresh volume.
constexpr uint64_t churn_every = 32;

/// Mount+Unmount on the volumes `pick(n)` until `stop` is set.
template <class Pick>
void pair_loop(plugin_client& client, const std::string& id_prefix, const std::atomic<bool>& stop,
               Pick pick, client_stats& stats, error_log& errors, bool mixed = false) {
  for (uint64_t seq = 0; !stop.load(std::memory_order_relaxed); ++seq) {
    if (mixed && seq % churn_every == churn_every - 1) {
      auto churn = "churn-" + id_prefix + std::to_string(seq);
      auto c = client.create(churn);
      auto r = c.ok ? client.remove(churn) : c;
      if (!r.ok) {
        errors.add("Create+Remove " + churn + ": " + r.err);
      }
    }
    const std::string& name = pick(seq);
    auto id = id_prefix + std::to_string(seq);
    auto t0 = bench_clock::now();
    auto m = client.mount(name, id);
    auto t1 = bench_clock::now();
    if (!m.ok) {
      errors.add("Mount " + name + " id " + id + ": " + m.err);
      // Do not spin on a dead socket.
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
      continue;
    }
    stats.mount.add(elapsed_ms(t0, t1));
    auto u = client.unmount(name, id);
    auto t2 = bench_clock::now();
    if (!u.ok) {
      errors.add("Unmount " + name + " id " + id + ": " + u.err);
      continue;
    }
    stats.unmount.add(elapsed_ms(t1, t2));
    stats.pair.add(elapsed_ms(t0, t2));
    std::lock_guard<std::mutex> guard{stats.interval_mtx};
    stats.interval.add(elapsed_ms(t0, t2));
  }
}

/// Every `every` seconds until `stop`: the interval's pairs/s and latencies, the errors so
/// far, and what berthd holds (process_report.hpp).
void report_loop(const options& opt, std::vector<client_stats>& stats, const error_log& errors,
                 const std::atomic<bool>& stop, bench_clock::time_point start) {
  auto every = std::chrono::duration<double>(opt.docker.report_every);
  auto last = start;
  for (int n = 1;; ++n) {
    auto due = start + std::chrono::duration_cast<bench_clock::duration>(every * n);
    while (bench_clock::now() < due) {
      if (stop.load()) {
        return;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    latency_recorder interval;
    for (auto& s : stats) {
      latency_recorder taken;
      {
        std::lock_guard<std::mutex> guard{s.interval_mtx};
        std::swap(taken, s.interval);
      }
      interval.merge(taken);
    }
    auto now = bench_clock::now();
    double secs = elapsed_ms(last, now) / 1000.0;
    last = now;
    std::printf("report t=%.0fs pairs/s=%.1f p50=%.3f p99=%.3f p999=%.3f max=%.3f ms "
                "errors=%" PRIu64 "%s\n",
                elapsed_ms(start, now) / 1000.0,
                secs > 0 ? static_cast<double>(interval.count()) / secs : 0.0,
                interval.percentile(50), interval.percentile(99), interval.percentile(99.9),
                interval.max(), errors.count(),
                describe(sample_process(opt.pid, opt.state_dir)).c_str());
    std::fflush(stdout);
  }
}

void print_line(const char* what, latency_recorder& rec, double seconds) {
  std::printf("%-16s ops=%-8zu ops/s=%-10.1f p50=%.3f ms  p99=%.3f ms  p999=%.3f ms  max=%.3f ms\n",
              what, rec.count(), seconds > 0 ? static_cast<double>(rec.count()) / seconds : 0.0,
              rec.percentile(50), rec.percentile(99), rec.percentile(99.9), rec.max());
}

} // namespace

int run_docker(const options& opt) {
  // -- setup ------------------------------------------------------------------
  plugin_client lister(opt.socket);
  std::vector<std::string> existing;
  auto listed = lister.list(existing);
  if (!listed.ok) {
    std::fprintf(stderr, "berth-bench: VolumeDriver.List on %s failed: %s\n", opt.socket.c_str(),
                 listed.err.c_str());
    return 1;
  }
  std::set<std::string> have(existing.begin(), existing.end());
  std::vector<std::string> names;
  std::vector<std::string> missing;
  names.reserve(static_cast<size_t>(opt.volumes));
  for (long i = 0; i < opt.volumes; ++i) {
    names.push_back(volume_name(opt.prefix, i));
    if (have.count(names.back()) == 0) {
      missing.push_back(names.back());
    }
  }
  if (!opt.stalled.empty() && have.count(opt.stalled) == 0) {
    missing.push_back(opt.stalled);
  }
  error_log setup_errors;
  {
    std::vector<std::unique_ptr<plugin_client>> clients;
    for (long t = 0; t < opt.concurrency; ++t) {
      clients.push_back(std::make_unique<plugin_client>(opt.socket));
    }
    auto t0 = bench_clock::now();
    parallel_for(static_cast<long>(missing.size()), opt.concurrency, [&](long t, long i) {
      auto& name = missing[static_cast<size_t>(i)];
      auto r = clients[static_cast<size_t>(t)]->create(name);
      if (!r.ok) {
        setup_errors.add("Create " + name + ": " + r.err);
      }
    });
    std::printf("setup: %zu volumes created, %zu existed, in %.2f s\n", missing.size(),
                static_cast<size_t>(opt.volumes) + (opt.stalled.empty() ? 0 : 1) - missing.size(),
                elapsed_ms(t0, bench_clock::now()) / 1000.0);
  }
  if (setup_errors.count() > 0) {
    std::fprintf(stderr, "berth-bench: %" PRIu64 " Create calls failed; not running\n",
                 setup_errors.count());
    return 1;
  }

  // -- run --------------------------------------------------------------------
  std::atomic<bool> stop{false};
  error_log errors;
  error_log stalled_errors;
  std::vector<client_stats> stats(static_cast<size_t>(opt.concurrency));
  client_stats stalled_stats;
  auto run_id = std::to_string(::getpid()) + "-" +
                std::to_string(bench_clock::now().time_since_epoch().count() % 1000000007);
  std::vector<std::thread> clients;
  std::thread stalled_client;
  if (!opt.stalled.empty()) {
    stalled_client = std::thread([&] {
      plugin_client client(opt.socket);
      pair_loop(
        client, "bench-" + run_id + "-stalled-", stop,
        [&](uint64_t) -> const std::string& { return opt.stalled; }, stalled_stats,
        stalled_errors);
    });
  }
  auto start = bench_clock::now();
  for (long k = 0; k < opt.concurrency; ++k) {
    clients.emplace_back([&, k] {
      plugin_client client(opt.socket);
      auto n = static_cast<uint64_t>(opt.volumes);
      auto c = static_cast<uint64_t>(opt.concurrency);
      auto first = static_cast<uint64_t>(k);
      pair_loop(
        client, "bench-" + run_id + "-" + std::to_string(k) + "-", stop,
        [&](uint64_t seq) -> const std::string& { return names[(first + seq * c) % n]; },
        stats[static_cast<size_t>(k)], errors, opt.docker.mixed);
    });
  }
  std::thread reporter;
  if (opt.docker.report_every > 0) {
    reporter = std::thread([&] { report_loop(opt, stats, errors, stop, start); });
  }
  std::this_thread::sleep_for(std::chrono::duration<double>(opt.seconds));
  stop = true;
  for (auto& th : clients) {
    th.join();
  }
  if (reporter.joinable()) {
    reporter.join();
  }
  double seconds = elapsed_ms(start, bench_clock::now()) / 1000.0;
  if (stalled_client.joinable()) {
    stalled_client.join();
  }

  // -- lists ------------------------------------------------------------------
  latency_recorder lists;
  for (long i = 0; i < opt.docker.lists; ++i) {
    // Only the count is checked: no name is built, and the client reuses its buffer.
    size_t listed_now = 0;
    auto t0 = bench_clock::now();
    auto r = lister.list_count(listed_now);
    lists.add(elapsed_ms(t0, bench_clock::now()));
    if (!r.ok) {
      errors.add("List: " + r.err);
    } else if (listed_now < names.size()) {
      errors.add("List shows " + std::to_string(listed_now) + " volumes, fewer than the "
                 + std::to_string(names.size()) + " the run uses");
    }
  }

  // -- report -----------------------------------------------------------------
  client_stats all;
  for (auto& s : stats) {
    all.mount.merge(s.mount);
    all.unmount.merge(s.unmount);
    all.pair.merge(s.pair);
  }
  std::printf("docker: %ld volumes, %ld clients, %.2f s\n", opt.volumes, opt.concurrency, seconds);
  print_line("mount", all.mount, seconds);
  print_line("unmount", all.unmount, seconds);
  print_line("mount+unmount", all.pair, seconds);
  if (!opt.stalled.empty()) {
    print_line("stalled pair", stalled_stats.pair, seconds);
    std::printf("stalled volume %s: %" PRIu64 " errors\n", opt.stalled.c_str(),
                stalled_errors.count());
  }
  if (opt.docker.lists > 0) {
    std::printf("list             lists=%-6zu p50=%.3f ms  p99=%.3f ms  max=%.3f ms (one client, "
                "after the pairs)\n",
                lists.count(), lists.percentile(50), lists.percentile(99), lists.max());
  }
  std::printf("errors: %" PRIu64 "\n", errors.count());
  std::optional<double> rss;
  if (opt.pid > 0) {
    rss = read_rss_mb(opt.pid);
    auto hwm = read_rss_mb(opt.pid, "VmHWM");
    if (rss) {
      std::printf("rss: pid %ld VmRSS %.1f MB, VmHWM %.1f MB\n", opt.pid, *rss, hwm.value_or(0.0));
    } else {
      std::printf("rss: cannot read /proc/%ld/status\n", opt.pid);
    }
  }
  double pairs_per_s = seconds > 0 ? static_cast<double>(all.pair.count()) / seconds : 0.0;
  std::printf("{\"mode\":\"docker\",\"pairs_per_s\":%.1f,\"pairs\":%zu,\"p50_ms\":%.3f,"
              "\"p99_ms\":%.3f,\"p999_ms\":%.3f,\"max_ms\":%.3f,"
              "\"mount_p99_ms\":%.3f,\"unmount_p99_ms\":%.3f,\"errors\":%" PRIu64
              ",\"volumes\":%ld,\"concurrency\":%ld,\"seconds\":%.2f",
              pairs_per_s, all.pair.count(), all.pair.percentile(50), all.pair.percentile(99),
              all.pair.percentile(99.9), all.pair.max(), all.mount.percentile(99),
              all.unmount.percentile(99), errors.count(), opt.volumes, opt.concurrency, seconds);
  if (!opt.stalled.empty()) {
    std::printf(",\"stalled\":%s,\"stalled_pairs\":%zu,\"stalled_errors\":%" PRIu64,
                json_quote(opt.stalled).c_str(), stalled_stats.pair.count(),
                stalled_errors.count());
  }
  if (opt.docker.lists > 0) {
    std::printf(",\"lists\":%zu,\"list_p50_ms\":%.3f,\"list_p99_ms\":%.3f", lists.count(),
                lists.percentile(50), lists.percentile(99));
  }
  if (rss) {
    std::printf(",\"rss_mb\":%.1f", *rss);
  }
  std::printf("}\n");
  std::fflush(stdout);
  return errors.count() == 0 ? 0 : 2;
}

} // namespace berth::bench
