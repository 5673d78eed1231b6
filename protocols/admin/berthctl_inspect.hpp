#pragma once

// berthctl inspect's view of a volume's mount IDs (issue 11): per ID its count, the
// dockerd instance that made it and when it was last mounted, read from the admin
// API's record JSON ("mount_origins", docs/architecture.md).

#include <string>

#include <caf/error.hpp>

#include "core/volume_record.hpp"

namespace berth::cli {

/// Reads the "mount_origins" object of the admin API's record JSON `body` into
/// `rec.origins`: {"<ID>": {"dockerd": "PID@TICKS", "last_mounted_ms": <ms>}}. Absent
/// (a berthd from before issue 11): no origins, shown as unknown. An entry for an ID
/// that `rec.mounts` does not count is dropped (keys(origins) stay within keys(mounts));
/// a field of the wrong type is an error naming it.
caf::error read_mount_origins(const std::string& body, volume_record& rec);

/// A time in ms since the epoch as RFC 3339 UTC ("2026-12-01T15:04:05Z"); "unknown"
/// for 0 or less (never recorded).
std::string format_mounted_at(int64_t ms);

/// One line per mount ID, each indented by two spaces:
/// "  ID: count N, dockerd PID@TICKS, last mounted 2026-12-01T15:04:05Z\n", with
/// "unknown" for a dockerd or a time that the record lacks.
std::string format_mount_ids(const volume_record& rec);

} // namespace berth::cli
