#pragma once

// berthctl inspect's view of a volume's mount IDs: per ID its count, the
// dockerd instance that made it and when it was last mounted (the record's origins,
// which record_from_json reads from the admin API's "mount_origins").

#include <string>

#include "core/volume_record.hpp"

namespace berth::cli {

/// A time in ms since the epoch as RFC 3339 UTC ("2026-12-01T15:04:05Z"); "unknown"
/// for 0 or less (never recorded).
std::string format_mounted_at(int64_t ms);

/// One line per mount ID, each indented by two spaces:
/// "  ID: count N, dockerd PID@TICKS, last mounted 2026-12-01T15:04:05Z\n", with
/// "unknown" for a dockerd or a time that the record lacks.
std::string format_mount_ids(const volume_record& rec);

} // namespace berth::cli
