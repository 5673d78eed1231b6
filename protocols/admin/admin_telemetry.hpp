#pragma once

// The bodies of the admin API's read-only telemetry routes, without actors or sockets:
// what berthctl status and top read. Both only read the lock-free counters of
// core/telemetry/telemetry.hpp, so they never wait for an actor.

#include <chrono>
#include <string>

#include "core/telemetry/telemetry.hpp"

namespace berth::admin {

/// GET /v1/status at `now`:
///   {"version", "revision", "started_at" (RFC 3339), "uptime_seconds",
///    "ready" (bool), "not_ready_reason" ("" when ready),
///    "volumes": {"total", "by_state": {"idle", "mounted", "staged", "published"}},
///    "snapshots", "mount_ids", "csi_staged", "csi_published", "uncertain",
///    "reconcile_pending", "journal_bytes", "journal_appends", "fsyncs",
///    "last_fsync_seconds"}
/// `volumes` counts records of kind volume (every backend); snapshots count apart.
std::string status_json(const telemetry& t, std::chrono::system_clock::time_point now);

/// GET /v1/operations at `now`:
///   {"monotonic_seconds": S, "operations": [{"protocol", "operation", "count",
///     "codes": {"ok": N, ...} (codes with N > 0), "duration": {"upper_bounds": [...],
///     "cumulative_counts": [...], "sum", "count"}}, ...]}
/// One entry per (protocol, operation) that has counted anything, sorted by protocol and
/// operation. `monotonic_seconds` is steady_clock's reading: a client takes two samples
/// and divides the counts' difference by the difference of the two readings.
std::string operations_json(const telemetry& t, std::chrono::steady_clock::time_point now);

} // namespace berth::admin
