#pragma once

// Each mounted block volume's used bytes, read with statvfs(3) every interval into
// telemetry::usage, which the metrics scrape and the admin API read (docs/running.md,
// "Volume usage"), with what its image takes on the host and whether its loop device uses
// direct I/O. One statvfs and one stat per mounted block volume, one scan of the loop
// devices per sample: no tree walk, and a directory volume is never measured.

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <caf/expected.hpp>

#include "apps/berthd/periodic_thread.hpp"
#include "core/telemetry/telemetry.hpp"
#include "core/volume_record.hpp"

namespace berth {

class block_backend;

/// The path whose filesystem holds `rec`'s data and can be measured by one statvfs: a
/// Docker block volume's mount point while mounted, a CSI block volume's staging path
/// while staged as a filesystem; "" for anything else (a directory volume, a snapshot).
std::string measured_path(const volume_record& rec);

/// statvfs(3) of `path`: the bytes its filesystem uses, (f_blocks - f_bfree) * f_frsize.
caf::expected<uint64_t> used_bytes_at(const std::string& path);

class usage_sampler {
public:
  /// Every record (the registry's list), or why not.
  using record_source = std::function<caf::expected<std::vector<volume_record>>()>;
  using measure_fn = std::function<caf::expected<uint64_t>(const std::string& path)>;
  /// Fills in the image's figures (allocated bytes, direct I/O) of each measured volume.
  using images_fn =
    std::function<void(const std::vector<volume_record>& measured, volume_usage::table& figures)>;

  /// @param max_series at most this many volumes (the first by name) are measured.
  usage_sampler(record_source records, std::shared_ptr<telemetry> stats, size_t max_series,
                std::chrono::milliseconds interval, measure_fn measure = used_bytes_at,
                images_fn images = nullptr);
  usage_sampler(const usage_sampler&) = delete;
  usage_sampler& operator=(const usage_sampler&) = delete;

  /// Starts the thread: a sample now, then one every interval.
  void start() { thread_.start(); }
  /// Stops and joins the thread.
  void stop() { thread_.stop(); }

  /// One sample: the thread's step.
  void sample_once();

private:
  record_source records_;
  std::shared_ptr<telemetry> stats_;
  size_t max_series_;
  measure_fn measure_;
  images_fn images_;
  periodic_thread thread_; ///< last: stopped first, while the rest still stands
};

/// The usage sampler's images_fn for the block backend `block` (none: nothing to add): each
/// measured volume's image's allocated bytes and whether its loop device uses direct I/O,
/// with one scan of the loop devices per sample.
usage_sampler::images_fn image_figures_of(const block_backend* block);

} // namespace berth
