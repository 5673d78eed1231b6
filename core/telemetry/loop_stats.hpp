#pragma once

// How the block backend's loop devices were set up, counted where they are attached
// (backends/loop_device.cpp) and read by the metrics scrape (berth_loop_attaches_total,
// berth_loop_direct_io_unavailable_total).

#include "core/telemetry/atomic_metrics.hpp"

namespace berth {

struct loop_stats {
  /// Attached in one call by LOOP_CONFIGURE (Linux 5.8+).
  metrics::atomic_counter configured;
  /// Attached by LOOP_SET_FD, then one setting at a time (a kernel without LOOP_CONFIGURE).
  metrics::atomic_counter set_fd;
  /// Attached without the direct I/O asked for: the image's filesystem cannot do O_DIRECT,
  /// or the device's block size is below the disk's. Its pages are cached twice.
  metrics::atomic_counter direct_io_unavailable;
};

} // namespace berth
