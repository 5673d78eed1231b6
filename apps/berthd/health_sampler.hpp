#pragma once

// Every volume's health, observed every interval into telemetry::health, which the CSI
// services, Docker's Status, the admin API and the metrics read (docs/running.md, "Volume
// health"). One scan of the loop devices and one read of mountinfo per sample, then a stat
// of each block volume's image and a read of each mounted filesystem's root: on its own
// thread, so a look at a failing filesystem never holds up a volume's transitions.

#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include <caf/expected.hpp>

#include "apps/berthd/periodic_thread.hpp"
#include "core/telemetry/telemetry.hpp"
#include "core/volume_record.hpp"

namespace berth {

class block_backend;

class health_sampler {
public:
  /// Every record (the registry's list), or why not.
  using record_source = std::function<caf::expected<std::vector<volume_record>>()>;
  /// The conditions of each volume of `recs` that has any, or why the host could not be
  /// read (the last conditions then stay).
  using observe_fn = std::function<caf::expected<std::map<std::string, volume_conditions>>(
    const std::vector<volume_record>&)>;

  health_sampler(record_source records, std::shared_ptr<telemetry> stats,
                 std::chrono::milliseconds interval, observe_fn observe);
  health_sampler(const health_sampler&) = delete;
  health_sampler& operator=(const health_sampler&) = delete;

  /// Starts the thread: a sample now, then one every interval.
  void start() { thread_.start(); }
  /// Stops and joins the thread.
  void stop() { thread_.stop(); }

  /// One sample: the thread's step. Lists the records before and after the look at the
  /// host; a volume whose record changed between keeps its last conditions.
  void sample_once();

private:
  record_source records_;
  std::shared_ptr<telemetry> stats_;
  observe_fn observe_;
  periodic_thread thread_; ///< last: stopped first, while the rest still stands
};

/// The health sampler's observe_fn for the block backend `block` (none: every volume is
/// seen healthy): block_backend::observe of each block volume, with one scan of the loop
/// devices and one read of mountinfo per sample.
health_sampler::observe_fn block_conditions_of(const block_backend* block);

} // namespace berth
