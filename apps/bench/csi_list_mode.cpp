// berth-bench csi-list: the time of a whole ListVolumes over many volumes.
//
//   setup:    C clients create V volumes <prefix>-list-<run>-<i> (1 MiB, backend B;
//             not timed)
//   lists:    one client calls ListVolumes L times, one after another, with no
//             max_entries (the whole list in one answer), and checks each answer
//             holds the V volumes
//   teardown: C clients delete the V volumes
//
// Readable lines, then one JSON object as the last line.

#include "apps/bench/csi_list.hpp"

#include <cinttypes>
#include <cstdio>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <unistd.h>

#include "apps/bench/common.hpp"
#include "apps/bench/csi_client.hpp"
#include "apps/bench/latency.hpp"
#include "core/json_text.hpp"

namespace berth::bench {

namespace {

namespace v1 = ::csi::v1;

constexpr int64_t list_volume_bytes = int64_t{1} << 20; // 1 MiB

/// How many entries of `listed` are this run's volumes (their names start with `base`).
long count_ours(const v1::ListVolumesResponse& listed, const std::string& base) {
  long n = 0;
  for (const auto& entry : listed.entries()) {
    if (entry.volume().volume_id().compare(0, base.size(), base) == 0) {
      ++n;
    }
  }
  return n;
}

} // namespace

int run_csi_list(const csi_list_options& opt) {
  if (v1::ControllerGetCapabilitiesResponse caps; !controller_capabilities(opt.endpoint, caps)) {
    return 1;
  }
  const std::string base = opt.prefix + "-list-" + std::to_string(::getpid()) + "-";
  std::vector<std::unique_ptr<csi_client>> clients;
  for (long k = 0; k < opt.concurrency; ++k) {
    clients.push_back(std::make_unique<csi_client>(opt.endpoint));
  }

  // -- setup: V volumes -------------------------------------------------------------
  error_log setup_errors;
  auto setup_start = bench_clock::now();
  parallel_for(opt.volumes, opt.concurrency, [&](long k, long i) {
    auto& c = *clients[static_cast<size_t>(k)];
    auto name = base + std::to_string(i);
    v1::CreateVolumeResponse created;
    auto err = rpc(*c.controller, &v1::Controller::Stub::CreateVolume,
                   create_request(name, list_volume_bytes, opt.backend), created);
    if (!err.empty()) {
      setup_errors.add("CreateVolume " + name + ": " + err);
    }
  });
  double setup_s = elapsed_ms(setup_start, bench_clock::now()) / 1000.0;
  std::printf("setup: %ld volumes created in %.2f s, %" PRIu64 " errors\n", opt.volumes, setup_s,
              setup_errors.count());

  // -- lists: one client, one after another --------------------------------------------
  error_log errors;
  latency_recorder lists;
  size_t bytes = 0;
  auto cpu_before = opt.pid > 0 ? read_cpu_seconds(opt.pid) : std::nullopt;
  if (setup_errors.count() == 0) {
    auto& c = *clients[0];
    for (long i = 0; i < opt.lists; ++i) {
      v1::ListVolumesResponse listed;
      auto t0 = bench_clock::now();
      auto err =
        rpc(*c.controller, &v1::Controller::Stub::ListVolumes, v1::ListVolumesRequest{}, listed);
      auto t1 = bench_clock::now();
      if (!err.empty()) {
        errors.add("ListVolumes: " + err);
        continue;
      }
      if (auto ours = count_ours(listed, base); ours != opt.volumes) {
        errors.add("ListVolumes listed " + std::to_string(ours) + " of the "
                   + std::to_string(opt.volumes) + " volumes made");
        continue;
      }
      bytes = listed.ByteSizeLong();
      lists.add(elapsed_ms(t0, t1));
    }
  }
  std::optional<double> rss;
  std::optional<double> cpu_ms_per_list; // berthd's, over the lists
  if (opt.pid > 0) {
    rss = read_rss_mb(opt.pid);
    auto cpu_after = read_cpu_seconds(opt.pid);
    if (cpu_before && cpu_after && lists.count() > 0) {
      cpu_ms_per_list = (*cpu_after - *cpu_before) * 1000.0 / static_cast<double>(lists.count());
    }
  }

  // -- teardown ------------------------------------------------------------------------
  error_log teardown_errors;
  parallel_for(opt.volumes, opt.concurrency, [&](long k, long i) {
    auto& c = *clients[static_cast<size_t>(k)];
    v1::DeleteVolumeRequest del;
    del.set_volume_id(base + std::to_string(i));
    v1::DeleteVolumeResponse deleted;
    auto err = rpc(*c.controller, &v1::Controller::Stub::DeleteVolume, del, deleted);
    if (!err.empty()) {
      teardown_errors.add("DeleteVolume " + del.volume_id() + ": " + err);
    }
  });

  std::printf("list               lists=%-6zu entries=%ld bytes=%zu p50=%.3f ms  p99=%.3f ms  "
              "max=%.3f ms (one client, the whole list per call)\n",
              lists.count(), opt.volumes, bytes, lists.percentile(50), lists.percentile(99),
              lists.max());
  auto total_errors = setup_errors.count() + errors.count() + teardown_errors.count();
  std::printf("errors: %" PRIu64 " (setup %" PRIu64 ", lists %" PRIu64 ", teardown %" PRIu64 ")\n",
              total_errors, setup_errors.count(), errors.count(), teardown_errors.count());
  if (rss) {
    std::printf("rss: pid %ld VmRSS %.1f MB\n", opt.pid, *rss);
  }
  if (cpu_ms_per_list) {
    std::printf("cpu: pid %ld used %.2f ms per list (user and system)\n", opt.pid,
                *cpu_ms_per_list);
  }
  std::printf("{\"mode\":\"csi-list\",\"endpoint\":%s,\"volumes\":%ld,\"lists\":%zu,"
              "\"list_bytes\":%zu,\"list_p50_ms\":%.3f,\"list_p99_ms\":%.3f,\"list_max_ms\":%.3f,"
              "\"setup_s\":%.2f,\"errors\":%" PRIu64 ",\"rss_mb\":%s,"
              "\"server_cpu_ms_per_list\":%s}\n",
              json_quote(opt.endpoint).c_str(), opt.volumes, lists.count(), bytes,
              lists.percentile(50), lists.percentile(99), lists.max(), setup_s, total_errors,
              rss ? std::to_string(*rss).c_str() : "null",
              cpu_ms_per_list ? std::to_string(*cpu_ms_per_list).c_str() : "null");
  if (setup_errors.count() > 0) {
    return 1;
  }
  return total_errors > 0 ? 2 : 0;
}

} // namespace berth::bench
