#pragma once

// The process metrics every Prometheus client exports (process_start_time_seconds,
// process_resident_memory_bytes, process_open_fds), read from /proc.

#include <string>

#include <caf/expected.hpp>

namespace berth::metrics {

/// What /proc says about this process.
struct process_stats {
  double start_time_seconds = 0;    ///< since the Unix epoch
  double resident_memory_bytes = 0; ///< RSS
  double open_fds = 0;              ///< descriptors open now
};

/// Reads /proc/self/stat, /proc/stat (btime) and /proc/self/fd; an error names the
/// file that could not be read or parsed.
caf::expected<process_stats> read_process_stats();

} // namespace berth::metrics
