#pragma once

// `berthctl status`: GET /v1/status read back and written for people. Pure functions.

#include <cstdint>
#include <map>
#include <string>
#include <string_view>

#include <caf/expected.hpp>

namespace berth::cli {

/// What GET /v1/status says (admin::status_json).
struct status_info {
  std::string version;
  std::string revision;
  std::string started_at;
  double uptime_seconds = 0;
  bool ready = false;
  std::string not_ready_reason;
  int64_t volumes = 0;
  std::map<std::string, int64_t> by_state; ///< idle, mounted, staged, published
  int64_t snapshots = 0;
  int64_t mount_ids = 0;
  int64_t csi_staged = 0;
  int64_t csi_published = 0;
  int64_t uncertain = 0;
  int64_t reconcile_pending = 0;
  int64_t journal_bytes = 0;
  uint64_t journal_appends = 0;
  uint64_t fsyncs = 0;
  double last_fsync_seconds = 0;
};

/// Reads a GET /v1/status body; an error (ec::invalid_argument) names the field.
caf::expected<status_info> parse_status(std::string_view json);

/// A duration for people: "45s", "3m 12s", "2h 5m", "4d 3h".
std::string format_uptime(double seconds);

/// The text of `berthctl status`, one "key: value" line each.
std::string format_status(const status_info& s);

} // namespace berth::cli
