#pragma once

// What berthd counts, in one object the daemon builds at start and hands to every part
// that counts (adapters, volume actors, the persistence actor, start-up reconciliation)
// and to the readers (the /metrics endpoint, berthctl status and top through the admin
// API). Everything here is lock-free (core/telemetry/tables.hpp): the hot path never waits
// for a scrape, and a scrape never asks an actor.
//
// Metric family names and labels are written once, in protocols/metrics/collect.cpp;
// the vocabulary of label values is here.

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include <caf/error.hpp>

#include "core/telemetry/atomic_metrics.hpp"
#include "core/telemetry/backend_call.hpp"
#include "core/telemetry/loop_stats.hpp"
#include "core/telemetry/tables.hpp"
#include "core/telemetry/volume_health.hpp"
#include "core/telemetry/volume_usage.hpp"
#include "core/volume_record.hpp"

namespace berth {

/// Latency buckets, seconds: 100 µs to 30 s (the backend timeout's default).
const std::vector<double>& latency_buckets();

/// Group-commit sizes, records: 1, 2, 4, ..., 4096.
const std::vector<double>& batch_buckets();

/// The `code` label of an outcome: "ok" for no error, the berth code's name
/// (to_string(ec), e.g. "not_found") for a berth error, "other" for any other error.
std::string_view code_of(const caf::error& err) noexcept;

/// Every value code_of() returns.
const std::vector<std::string>& code_names();

/// The operations each protocol counts. Docker: the plugin call without its prefix
/// ("activate", "create", "mount", ...); CSI: the RPC's name ("NodeStageVolume"); admin:
/// the route ("list", "get", "resize", "modify", "release", "snapshot", "snapshots",
/// "snapshot_remove", "unclaimed", "unclaimed_remove", "status", "operations").
const std::vector<label_pair>& operation_names();

/// The backend calls timed (backend_stats::call_duration's second label): label_of() of
/// every backend_call.
const std::vector<std::string>& backend_call_names();

/// What start-up reconciliation does (reconcile_actions' labels).
const std::vector<std::string>& reconcile_action_names();

/// The Docker plugin endpoints as operation labels ("activate", "mount", ...).
const std::vector<std::string>& docker_endpoint_names();

/// The labels of telemetry::modify_requests. Every expand or modify request counts
/// once as `received` and once more as what happened to it.
namespace modify_result {
inline constexpr const char* received = "received";   ///< every request
inline constexpr const char* merged = "merged";       ///< joined a window another request opened
inline constexpr const char* satisfied = "satisfied"; ///< already true: no window, no call
inline constexpr const char* applied = "applied";     ///< its backend call succeeded
inline constexpr const char* failed = "failed";       ///< its backend call (or the persist) failed
inline constexpr const char* refused_shrink = "refused_shrink";
inline constexpr const char* refused_invalid = "refused_invalid";   ///< unknown or immutable key, bad value
inline constexpr const char* refused_conflict = "refused_conflict"; ///< a second value in the window
inline constexpr const char* refused_state = "refused_state"; ///< no such volume, another owner, hung
} // namespace modify_result

/// Every modify_result label.
const std::vector<std::string>& modify_result_names();

/// The `state` label of berth_volumes: "published" (a CSI publication), "staged",
/// "mounted" (a Docker mount ID), else "idle". Snapshots are always "idle".
const char* volume_state_of(const volume_record& rec) noexcept;

/// Finished requests by (protocol, operation): counts by code_of() and a latency
/// histogram (arrival to answer).
class operation_table {
public:
  operation_table();

  /// Counts one answered request.
  void record(std::string_view protocol, std::string_view operation, std::string_view code,
              double seconds) noexcept;

  /// One (protocol, operation) as a scrape sees it.
  struct row {
    label_pair key;                                     ///< (protocol, operation)
    std::vector<std::pair<std::string, uint64_t>> codes; ///< every code, zeros included
    metrics::histogram_data duration;
  };

  /// Every row, sorted by key.
  std::vector<row> snapshot() const;

private:
  histogram_table durations_;
  std::vector<counter_table> codes_; ///< parallel to durations_.keys()
};

/// What the committed records of all volumes add up to. The volume actors keep it as
/// their records change (replace()), so a scrape never scans the records.
class volume_gauges {
public:
  /// @param backends the backend names berth_volumes is labelled with.
  explicit volume_gauges(std::vector<std::string> backends);

  /// Moves one volume's share from `before` to `after` (null: no committed record).
  void replace(const volume_record* before, const volume_record* after) noexcept;

  /// One (backend, kind, state) count.
  struct row {
    std::string backend, kind, state;
    int64_t volumes = 0;
  };

  /// Every (backend, kind, state), zeros included.
  std::vector<row> snapshot() const;

  atomic_gauge mount_ids;     ///< Docker mount IDs held, over all volumes
  atomic_gauge csi_staged;    ///< volumes staged (NodeStageVolume)
  atomic_gauge csi_published; ///< CSI publications (targets), over all volumes
  atomic_gauge uncertain;     ///< volumes with a hung backend call (call_slot::hung)
  /// Loaded volumes whose first reconciliation with the host has not finished (a
  /// timed-out one counts as finished: that volume is then uncertain).
  atomic_gauge reconcile_pending;

private:
  size_t index(std::string_view backend, record_kind kind, std::string_view state) const noexcept;

  std::vector<std::string> backends_; ///< sorted, unique, holds "other"
  std::unique_ptr<atomic_gauge[]> counts_;
};

/// The journal and the snapshot (persistence actor and file_store).
struct persistence_stats {
  metrics::atomic_counter journal_appends; ///< records appended (one per put or erase)
  metrics::atomic_histogram fsync_duration{latency_buckets()};
  metrics::atomic_histogram group_commit_records{batch_buckets()}; ///< records per fsync
  atomic_gauge journal_bytes;                                 ///< the journal file's size now
  metrics::atomic_histogram snapshot_duration{latency_buckets()}; ///< one compaction
  std::atomic<double> last_fsync_seconds{0};                  ///< for berthctl status
};

/// Backend calls (the volume engine's submit_call and its timeouts).
struct backend_stats {
  explicit backend_stats(const std::vector<std::string>& backends);

  histogram_table call_duration; ///< (backend, call) from backend_call_names()
  counter_table timeouts;        ///< by backend: calls abandoned past --backend-timeout-ms
};

/// Whether berthd can serve: /readyz and berthctl status read it.
struct readiness {
  std::atomic<bool> state_loaded{false}; ///< the state is loaded and compacted
  std::atomic<bool> serving{false};      ///< every configured socket accepts
  std::atomic<bool> stopping{false};     ///< a graceful stop has begun (SIGTERM)
  std::chrono::system_clock::time_point started = std::chrono::system_clock::now();
};

/// Everything berthd counts. Built once at start, shared by pointer, never copied.
struct telemetry {
  /// @param backends the backend names ("local", "block").
  explicit telemetry(const std::vector<std::string>& backends);

  telemetry(const telemetry&) = delete;
  telemetry& operator=(const telemetry&) = delete;

  operation_table operations;
  volume_gauges volumes;
  counter_table modify_requests;      ///< by modify_result (actors/volume_mailbox.cpp)
  counter_table modify_backend_calls; ///< by backend
  persistence_stats persistence;
  backend_stats backends;
  counter_table reconcile_actions; ///< by reconcile_action_names()
  /// Docker mount IDs released because dockerd will never Unmount them,
  /// by release_reason_names() (actors/release_rules.hpp); counted by the volume
  /// actor when a release is committed.
  counter_table mount_ids_released;
  /// Docker plugin requests whose answer was destroyed without being sent (the HTTP
  /// layer then answered 500), by docker_endpoint_names() (protocols/docker/docker_api.cpp).
  counter_table docker_replies_lost;
  /// 1 while the Docker Engine API (--docker-api) answers, else 0 (protocols/docker/sync/).
  atomic_gauge docker_engine_up;
  /// Cluster mode: CSI volumes (snapshots) recorded on this node that no BerthVolume
  /// (BerthSnapshot) names, as of the node agent's last full LISTs
  /// (protocols/kube/agent/node_agent_unclaimed.cpp).
  atomic_gauge unclaimed_volumes;
  /// Mounted block volumes' used bytes and limits (apps/berthd/usage_sampler).
  volume_usage usage;
  /// What is wrong with each volume (apps/berthd/health_sampler, the volume actors).
  volume_health health;
  /// How the block backend's loop devices were attached; shared with it, which counts.
  std::shared_ptr<loop_stats> loop = std::make_shared<loop_stats>();
  readiness ready;
};

/// Why berthd is not ready ("" when it is): the state is still loading, volumes are
/// still reconciling with the host (how many), the sockets are not accepting yet, or
/// berthd is stopping.
/// /readyz and berthctl status say the same thing.
std::string not_ready_reason(const telemetry& t);

} // namespace berth
