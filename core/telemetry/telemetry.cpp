#include "core/telemetry/telemetry.hpp"

#include <algorithm>

#include "core/errors.hpp"
#include "core/mount_release.hpp"

namespace berth {

namespace {

constexpr uint8_t first_code = static_cast<uint8_t>(ec::invalid_argument);
constexpr uint8_t last_code = static_cast<uint8_t>(ec::resource_exhausted);

const char* const volume_states[] = {"idle", "mounted", "staged", "published"};
constexpr size_t state_count = sizeof(volume_states) / sizeof(volume_states[0]);
const record_kind kinds[] = {record_kind::volume, record_kind::snapshot};
constexpr size_t kind_count = sizeof(kinds) / sizeof(kinds[0]);

std::vector<label_pair> with_protocol(const char* protocol, std::vector<const char*> ops) {
  std::vector<label_pair> out;
  for (auto op : ops) {
    out.emplace_back(protocol, op);
  }
  return out;
}

std::vector<std::string> sorted_with_other(std::vector<std::string> keys) {
  keys.emplace_back(other_label);
  std::sort(keys.begin(), keys.end());
  keys.erase(std::unique(keys.begin(), keys.end()), keys.end());
  return keys;
}

} // namespace

const std::vector<double>& latency_buckets() {
  static const std::vector<double> bounds{0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005,
                                          0.01,   0.025,   0.05,   0.1,   0.25,   0.5,
                                          1,      2.5,     5,      10,    30};
  return bounds;
}

const std::vector<double>& batch_buckets() {
  static const std::vector<double> bounds = [] {
    std::vector<double> out;
    for (double b = 1; b <= 4096; b *= 2) {
      out.push_back(b);
    }
    return out;
  }();
  return bounds;
}

std::string_view code_of(const caf::error& err) noexcept {
  if (!err) {
    return "ok";
  }
  auto code = berth_code(err);
  if (code && err.code() >= first_code && err.code() <= last_code) {
    return to_string(*code);
  }
  return other_label;
}

const std::vector<std::string>& code_names() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> out{"ok", other_label};
    for (auto c = first_code; c <= last_code; ++c) {
      out.emplace_back(to_string(static_cast<ec>(c)));
    }
    return out;
  }();
  return names;
}

const std::vector<std::string>& docker_endpoint_names() {
  static const std::vector<std::string> names{"activate", "capabilities", "create", "get",
                                              "list", "mount", "path", "remove", "unmount"};
  return names;
}

const std::vector<label_pair>& operation_names() {
  static const std::vector<label_pair> names = [] {
    std::vector<label_pair> out;
    for (const auto& op : docker_endpoint_names()) {
      out.emplace_back("docker", op);
    }
    for (auto& op : with_protocol("csi",
                                  {"GetPluginInfo",
                                   "GetPluginCapabilities",
                                   "Probe",
                                   "CreateVolume",
                                   "DeleteVolume",
                                   "ControllerPublishVolume",
                                   "ControllerUnpublishVolume",
                                   "ValidateVolumeCapabilities",
                                   "ListVolumes",
                                   "GetCapacity",
                                   "ControllerGetCapabilities",
                                   "CreateSnapshot",
                                   "DeleteSnapshot",
                                   "ListSnapshots",
                                   "GetSnapshot",
                                   "ControllerExpandVolume",
                                   "ControllerGetVolume",
                                   "ControllerModifyVolume",
                                   "NodeStageVolume",
                                   "NodeUnstageVolume",
                                   "NodePublishVolume",
                                   "NodeUnpublishVolume",
                                   "NodeGetVolumeStats",
                                   "NodeExpandVolume",
                                   "NodeGetCapabilities",
                                   "NodeGetInfo",
                                   "GetMetadataAllocated",
                                   "GetMetadataDelta"})) {
      out.push_back(std::move(op));
    }
    for (auto& op : with_protocol("admin",
                                  {"list", "get", "resize", "modify", "release", "snapshot",
                                   "snapshots", "snapshot_remove", "unclaimed", "unclaimed_remove",
                                   "status", "operations", "export", "import", "snapshot_diff"})) {
      out.push_back(std::move(op));
    }
    return out;
  }();
  return names;
}

const std::vector<std::string>& backend_call_names() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> out;
    out.reserve(all_backend_calls.size());
    for (auto call : all_backend_calls) {
      out.emplace_back(label_of(call));
    }
    return out;
  }();
  return names;
}

const std::vector<std::string>& reconcile_action_names() {
  // At start (apps/berthd/daemon.cpp): cleared (volumes a new boot released), stray_unmounted
  // (Docker mounts of no record, CSI stagings and publications their record lacks),
  // loop_detached, loop_detach_failed, thawed (a filesystem a crash left frozen mid-snapshot),
  // direct_io_on (a kept loop device an older berthd attached without direct I/O),
  // image_removed (a block image no record holds: a create or copy killed before its commit),
  // copy_removed (a directory volume's copy no record holds, killed the same way).
  // In each volume's reconciliation
  // (count_reconcile_actions): remounted, restaged, republished, unmounted and their
  // failures; reconcile_failed: it did not finish (timed out, refused) or could not
  // detach a mount no ID holds (or, at start, a CSI mount its record lacks).
  static const std::vector<std::string> names{
    "cleared",         "remounted",        "unmounted",       "mount_failed",
    "stray_unmounted", "restaged",         "republished",     "loop_detached",
    "reconcile_failed", "restage_failed",  "republish_failed", "loop_detach_failed",
    "thawed",          "image_removed",    "copy_removed",     "direct_io_on"};
  return names;
}

const std::vector<std::string>& modify_result_names() {
  static const std::vector<std::string> names{
    modify_result::received,         modify_result::merged,          modify_result::satisfied,
    modify_result::applied,          modify_result::failed,          modify_result::refused_shrink,
    modify_result::refused_invalid,  modify_result::refused_conflict,
    modify_result::refused_state};
  return names;
}

const char* volume_state_of(const volume_record& rec) noexcept {
  if (rec.kind == record_kind::snapshot) {
    return "idle";
  }
  if (!rec.published.empty()) {
    return "published";
  }
  if (!rec.staging_path.empty()) {
    return "staged";
  }
  if (!rec.mounts.empty()) {
    return "mounted";
  }
  return "idle";
}

// -- operation_table ------------------------------------------------------------

operation_table::operation_table() : durations_(operation_names(), latency_buckets()) {
  codes_.reserve(durations_.keys().size());
  for (size_t i = 0; i < durations_.keys().size(); ++i) {
    codes_.emplace_back(code_names());
  }
}

void operation_table::record(std::string_view protocol, std::string_view operation,
                             std::string_view code, double seconds) noexcept {
  auto i = durations_.index_of(protocol, operation);
  durations_.row(i).observe(seconds);
  codes_[i].add(code);
}

std::vector<operation_table::row> operation_table::snapshot() const {
  std::vector<row> out;
  out.reserve(codes_.size());
  for (size_t i = 0; i < codes_.size(); ++i) {
    out.push_back(row{durations_.keys()[i], codes_[i].snapshot(), durations_.row(i).snapshot()});
  }
  return out;
}

// -- volume_gauges --------------------------------------------------------------

volume_gauges::volume_gauges(std::vector<std::string> backends)
  : backends_(sorted_with_other(std::move(backends))),
    counts_(std::make_unique<atomic_gauge[]>(backends_.size() * kind_count * state_count)) {
}

size_t volume_gauges::index(std::string_view backend, record_kind kind,
                            std::string_view state) const noexcept {
  auto it = std::lower_bound(backends_.begin(), backends_.end(), backend);
  if (it == backends_.end() || *it != backend) {
    it = std::lower_bound(backends_.begin(), backends_.end(), std::string_view{other_label});
  }
  size_t b = static_cast<size_t>(it - backends_.begin());
  size_t k = kind == record_kind::snapshot ? 1 : 0;
  size_t s = 0;
  while (s + 1 < state_count && state != volume_states[s]) {
    ++s;
  }
  return (b * kind_count + k) * state_count + s;
}

void volume_gauges::replace(const volume_record* before, const volume_record* after) noexcept {
  auto share = [this](const volume_record& rec, int64_t sign) {
    counts_[index(rec.backend, rec.kind, volume_state_of(rec))].add(sign);
    mount_ids.add(sign * static_cast<int64_t>(rec.mounts.size()));
    csi_staged.add(rec.staging_path.empty() ? 0 : sign);
    csi_published.add(sign * static_cast<int64_t>(rec.published.size()));
  };
  if (before != nullptr) {
    share(*before, -1);
  }
  if (after != nullptr) {
    share(*after, +1);
  }
}

std::vector<volume_gauges::row> volume_gauges::snapshot() const {
  std::vector<row> out;
  out.reserve(backends_.size() * kind_count * state_count);
  for (const auto& b : backends_) {
    for (auto k : kinds) {
      for (auto s : volume_states) {
        out.push_back(row{b, to_string(k), s, counts_[index(b, k, s)].value()});
      }
    }
  }
  return out;
}

// -- the rest -------------------------------------------------------------------

backend_stats::backend_stats(const std::vector<std::string>& backends)
  : call_duration(
      [&backends] {
        std::vector<label_pair> keys;
        for (const auto& b : backends) {
          for (const auto& call : backend_call_names()) {
            keys.emplace_back(b, call);
          }
        }
        return keys;
      }(),
      latency_buckets()),
    timeouts(backends) {
}

telemetry::telemetry(const std::vector<std::string>& backends)
  : volumes(backends), modify_requests(modify_result_names()), modify_backend_calls(backends),
    backends(backends), reconcile_actions(reconcile_action_names()),
    mount_ids_released(release_reason_names()), docker_replies_lost(docker_endpoint_names()) {
}

std::string not_ready_reason(const telemetry& t) {
  if (t.ready.stopping.load()) {
    return "berthd is stopping";
  }
  if (!t.ready.state_loaded.load()) {
    return "the state is loading";
  }
  if (auto n = t.volumes.reconcile_pending.value(); n > 0) {
    return std::to_string(n) + " volume(s) still reconciling with the host";
  }
  if (!t.ready.serving.load()) {
    return "the sockets are not accepting yet";
  }
  return "";
}

} // namespace berth
