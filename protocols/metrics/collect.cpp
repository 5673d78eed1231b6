#include "protocols/metrics/collect.hpp"

#include <spdlog/spdlog.h>

#include "core/errors.hpp"
#include "protocols/metrics/exposition.hpp"

namespace berth::metrics {

namespace {

family make(std::string name, std::string help, metric_type type) {
  family f;
  f.name = std::move(name);
  f.help = std::move(help);
  f.type = type;
  return f;
}

family gauge(std::string name, std::string help, double value) {
  auto f = make(std::move(name), std::move(help), metric_type::gauge);
  f.values.push_back(series{{}, value});
  return f;
}

/// A counter family with one label, one series per key of `table`.
family by_label(std::string name, std::string help, const char* label_name,
                const counter_table& table) {
  auto f = make(std::move(name), std::move(help), metric_type::counter);
  for (const auto& [key, n] : table.snapshot()) {
    f.values.push_back(series{{{label_name, key}}, static_cast<double>(n)});
  }
  return f;
}

family histogram(std::string name, std::string help, const atomic_histogram& h) {
  auto f = make(std::move(name), std::move(help), metric_type::histogram);
  f.histograms.push_back(histogram_series{{}, h.snapshot()});
  return f;
}

void add_operations(const telemetry& t, std::vector<family>& out) {
  auto total = make("berth_operations_total",
                    "Requests answered, by protocol (docker, csi, admin), operation and outcome "
                    "code (ok, or the error's code).",
                    metric_type::counter);
  auto duration = make("berth_operation_duration_seconds",
                       "How long requests took from arrival to answer, by protocol and "
                       "operation.",
                       metric_type::histogram);
  for (auto& row : t.operations.snapshot()) {
    if (row.duration.count == 0) {
      continue;
    }
    for (const auto& [code, n] : row.codes) {
      if (n > 0) {
        total.values.push_back(series{
          {{"protocol", row.key.first}, {"operation", row.key.second}, {"code", code}},
          static_cast<double>(n)});
      }
    }
    duration.histograms.push_back(histogram_series{
      {{"protocol", row.key.first}, {"operation", row.key.second}}, std::move(row.duration)});
  }
  out.push_back(std::move(total));
  out.push_back(std::move(duration));
}

void add_volumes(const telemetry& t, std::vector<family>& out) {
  auto volumes = make("berth_volumes",
                      "Volumes and snapshots berth holds, by backend, kind and state (idle, "
                      "mounted, staged, published).",
                      metric_type::gauge);
  for (const auto& row : t.volumes.snapshot()) {
    volumes.values.push_back(
      series{{{"backend", row.backend}, {"kind", row.kind}, {"state", row.state}},
             static_cast<double>(row.volumes)});
  }
  out.push_back(std::move(volumes));
  const auto& v = t.volumes;
  out.push_back(gauge("berth_mount_ids", "Docker mount IDs held, over all volumes.",
                      static_cast<double>(v.mount_ids.value())));
  out.push_back(gauge("berth_csi_staged", "Volumes staged on this node (NodeStageVolume).",
                      static_cast<double>(v.csi_staged.value())));
  out.push_back(gauge("berth_csi_published",
                      "CSI publications (target paths), over all volumes.",
                      static_cast<double>(v.csi_published.value())));
  out.push_back(gauge("berth_volumes_uncertain",
                      "Volumes whose backend call hung past the backend timeout.",
                      static_cast<double>(v.uncertain.value())));
  out.push_back(gauge("berth_reconcile_pending_volumes",
                      "Loaded volumes whose first reconciliation with the host has not "
                      "finished.",
                      static_cast<double>(v.reconcile_pending.value())));
}

/// The usage sampler's last figures: one series per measured volume, at most its bound.
void add_usage(const telemetry& t, std::vector<family>& out) {
  auto used = make("berth_volume_used_bytes",
                   "Bytes used in a mounted block volume's filesystem (statvfs), by volume.",
                   metric_type::gauge);
  auto limit = make("berth_volume_limit_bytes",
                    "The size of a mounted block volume whose used bytes are exported, by "
                    "volume.",
                    metric_type::gauge);
  auto allocated = make("berth_volume_allocated_bytes",
                        "Bytes a mounted block volume's image takes on the host filesystem, "
                        "by volume: space its workload deleted comes back here once trimmed.",
                        metric_type::gauge);
  auto direct = make("berth_volume_direct_io",
                     "1 when a mounted block volume's loop device uses direct I/O (its pages "
                     "cached once), 0 when it reads and writes through the host's page "
                     "cache, by volume.",
                     metric_type::gauge);
  for (const auto& [name, figure] : t.usage.snapshot()) {
    used.values.push_back(series{{{"volume", name}}, static_cast<double>(figure.used_bytes)});
    limit.values.push_back(series{{{"volume", name}}, static_cast<double>(figure.limit_bytes)});
    if (figure.allocated_bytes != 0) {
      allocated.values.push_back(
        series{{{"volume", name}}, static_cast<double>(figure.allocated_bytes)});
    }
    if (figure.direct_io != direct_io_state::unknown) {
      direct.values.push_back(
        series{{{"volume", name}}, figure.direct_io == direct_io_state::on ? 1.0 : 0.0});
    }
  }
  out.push_back(std::move(used));
  out.push_back(std::move(limit));
  out.push_back(std::move(allocated));
  out.push_back(std::move(direct));
  out.push_back(gauge("berth_volume_usage_omitted",
                      "Mounted block volumes whose used bytes are not exported: beyond "
                      "--usage-series.",
                      static_cast<double>(t.usage.omitted())));
}

/// The volumes with each abnormal condition now, every reason's series even at 0.
void add_health(const telemetry& t, std::vector<family>& out) {
  auto abnormal = make("berth_volume_abnormal",
                       "Volumes with an abnormal condition now, by reason (the health "
                       "sampler's last sight, and backend calls that hung).",
                       metric_type::gauge);
  auto counts = t.health.counts();
  for (size_t i = 0; i < counts.size(); ++i) {
    abnormal.values.push_back(
      series{{{"reason", abnormal_reason_name(static_cast<abnormal_reason>(i))}},
             static_cast<double>(counts[i])});
  }
  out.push_back(std::move(abnormal));
}

void add_loops(const telemetry& t, std::vector<family>& out) {
  auto attaches = make("berth_loop_attaches_total",
                       "Loop devices the block backend attached, by how: configure (one "
                       "LOOP_CONFIGURE call, Linux 5.8+) or set_fd (LOOP_SET_FD and one "
                       "setting at a time, on an older kernel).",
                       metric_type::counter);
  attaches.values.push_back(
    series{{{"method", "configure"}}, static_cast<double>(t.loop->configured.value())});
  attaches.values.push_back(
    series{{{"method", "set_fd"}}, static_cast<double>(t.loop->set_fd.value())});
  out.push_back(std::move(attaches));
  auto refused = make("berth_loop_direct_io_unavailable_total",
                      "Loop devices attached without the direct I/O asked for (the image's "
                      "filesystem cannot do O_DIRECT, or the block size is below the disk's): "
                      "their pages are cached twice.",
                      metric_type::counter);
  refused.values.push_back(series{{}, static_cast<double>(t.loop->direct_io_unavailable.value())});
  out.push_back(std::move(refused));
}

void add_persistence(const telemetry& t, std::vector<family>& out) {
  const auto& p = t.persistence;
  auto appends = make("berth_journal_appends_total", "Records appended to the journal.",
                      metric_type::counter);
  appends.values.push_back(series{{}, static_cast<double>(p.journal_appends.value())});
  out.push_back(std::move(appends));
  out.push_back(histogram("berth_journal_fsync_duration_seconds",
                          "How long one fsync of the journal took.", p.fsync_duration));
  out.push_back(histogram("berth_group_commit_records",
                          "Records made durable by one fsync (group commit).",
                          p.group_commit_records));
  out.push_back(gauge("berth_journal_bytes", "The journal file's size.",
                      static_cast<double>(p.journal_bytes.value())));
  out.push_back(histogram("berth_snapshot_duration_seconds",
                          "How long one compaction (snapshot written, journal emptied) took.",
                          p.snapshot_duration));
}

void add_backends(const telemetry& t, std::vector<family>& out) {
  auto calls = make("berth_backend_call_duration_seconds",
                    "How long backend calls took, by backend and call.",
                    metric_type::histogram);
  const auto& table = t.backends.call_duration;
  for (size_t i = 0; i < table.keys().size(); ++i) {
    auto data = table.row(i).snapshot();
    if (data.count == 0) {
      continue;
    }
    const auto& [backend, call] = table.keys()[i];
    calls.histograms.push_back(
      histogram_series{{{"backend", backend}, {"call", call}}, std::move(data)});
  }
  out.push_back(std::move(calls));
  out.push_back(by_label("berth_backend_timeouts_total",
                         "Backend calls abandoned past --backend-timeout-ms, by backend.",
                         "backend", t.backends.timeouts));
}

} // namespace

std::vector<family> collect(const telemetry& t, const process_stats* proc,
                            const build_info& build) {
  std::vector<family> out;
  add_operations(t, out);
  add_volumes(t, out);
  add_usage(t, out);
  add_health(t, out);
  out.push_back(by_label("berth_modify_requests_total",
                         "Expand and modify requests: every one counts as received and once "
                         "more as what happened to it.",
                         "result", t.modify_requests));
  out.push_back(by_label("berth_modify_backend_calls_total",
                         "Backend calls made for expand and modify requests (after "
                         "coalescing), by backend.",
                         "backend", t.modify_backend_calls));
  add_persistence(t, out);
  add_backends(t, out);
  add_loops(t, out);
  out.push_back(by_label("berth_reconcile_actions_total",
                         "What start-up reconciliation with the host did, by action.", "action",
                         t.reconcile_actions));
  out.push_back(by_label("berth_mount_ids_released_total",
                         "Docker mount IDs released because dockerd will never Unmount them "
                         "(a crashed dockerd, a dead or removed container, an operator), by "
                         "reason.",
                         "reason", t.mount_ids_released));
  out.push_back(by_label("berth_docker_replies_lost_total",
                         "Docker plugin requests whose answer was lost (answered 500 by the "
                         "HTTP layer), by endpoint.",
                         "endpoint", t.docker_replies_lost));
  out.push_back(gauge("berth_docker_engine_up",
                      "1 while the Docker Engine API (--docker-api) answers, else 0.",
                      t.docker_engine_up.value()));
  out.push_back(gauge("berth_unclaimed_volumes",
                      "CSI volumes and snapshots recorded on this node that no BerthVolume or "
                      "BerthSnapshot names (cluster mode; berth never removes them on its own).",
                      static_cast<double>(t.unclaimed_volumes.value())));
  out.push_back(gauge("berth_ready", "1 when berthd is ready (/readyz answers 200), else 0.",
                      not_ready_reason(t).empty() ? 1 : 0));
  auto info = make("berth_build_info", "The version and revision berthd was built from.",
                   metric_type::gauge);
  info.values.push_back(series{{{"version", build.version}, {"revision", build.revision}}, 1});
  out.push_back(std::move(info));
  if (proc != nullptr) {
    out.push_back(gauge("process_start_time_seconds",
                        "Start time of the process since the Unix epoch, in seconds.",
                        proc->start_time_seconds));
    out.push_back(gauge("process_resident_memory_bytes", "Resident memory size, in bytes.",
                        proc->resident_memory_bytes));
    out.push_back(gauge("process_open_fds", "Open file descriptors.", proc->open_fds));
  }
  return out;
}

caf::expected<std::string> scrape(const telemetry& t) {
  auto proc = read_process_stats();
  if (!proc) {
    spdlog::warn("metrics: process_* left out of this scrape: {}", describe(proc.error()));
  }
  return render(collect(t, proc ? &*proc : nullptr, this_build()));
}

} // namespace berth::metrics
