#pragma once

// The dockerd reconciliation's decisions, single-threaded and on a clock passed in: when
// to run the release rules over every Docker record, and sending each release through the
// registry seam. docker_sync (docker_sync.hpp) runs it on its own thread; the tests call it
// directly with a fake clock.
//
//   trigger (start, new dockerd, die/destroy, a die's grace over, an operator)
//     ─▶ engine_view_keeper::refresh (container list, mount map)
//     ─▶ record_source (Docker records) ─▶ decide_releases / check_operator_release
//     ─▶ release_sink (the volume's journalled release transition, at its turn)

#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <set>
#include <string>

#include "core/operator_release.hpp"
#include "protocols/docker/sync/engine_view_keeper.hpp"
#include "protocols/docker/sync/seams.hpp"

namespace berth::docker_sync {

/// What the driver works with.
struct driver_config {
  std::shared_ptr<docker_engine::engine_api> api; ///< null: --docker-api is off
  record_source records;
  release_sink sink;
  std::shared_ptr<telemetry> stats;               ///< may be null
  std::chrono::milliseconds die_grace = default_die_grace;
  /// Whether a dockerd instance other than the current one still runs (dockerd_alive).
  std::function<bool(const dockerd_key&)> alive;
  engine_view_keeper::map_reader read_map = read_mount_map;
  /// Asked between two releases of one pass: true ends the pass (berthd is stopping).
  std::function<bool()> stopping = [] { return false; };
};

/// Runs the release rules when something may have made a count stale.
class release_driver {
public:
  explicit release_driver(driver_config cfg);

  /// berthd started (state loaded and reconciled): reconcile every Docker record.
  void started(release_clock::time_point now);

  /// The events stream opened from `who`: a new dockerd instance reconciles every record.
  void opened(const docker_engine::engine_instance& who, release_clock::time_point now);

  /// The events stream (or a call) failed: nothing is released until dockerd answers.
  void down();

  /// One container event; a die or destroy is kept for settle(), a die also sets a wakeup
  /// at its time plus the grace period.
  void event(const docker_engine::container_event& ev, release_clock::time_point now);

  /// After a batch of events: a fresh container list, then the rules (once per batch).
  void settle(release_clock::time_point now);

  /// Runs the rules when a die's grace period has ended by `now`.
  void tick(release_clock::time_point now);

  /// The earliest time tick() has work; none when no die waits for its grace.
  std::optional<release_clock::time_point> next_wakeup() const;

  /// `berthctl release VOLUME ID`: a fresh container list (when the API can be asked),
  /// check_operator_release, then the release with if_unchanged=false.
  caf::expected<operator_release_result> operator_release(const std::string& volume,
                                                          const std::string& id,
                                                          release_clock::time_point now);

  /// Passes run so far (tests).
  uint64_t passes() const {
    return passes_;
  }

private:
  /// refresh, then a pass; logs a failed refresh once per outage.
  void refresh_and_pass(const char* why, release_clock::time_point now);
  void pass(const char* why, release_clock::time_point now);
  engine_view view_for(const std::vector<volume_record>& recs) const;

  driver_config cfg_;
  engine_view_keeper keeper_;
  std::multiset<release_clock::time_point> wakeups_;
  bool events_pending_ = false;
  bool refresh_failed_ = false;
  uint64_t passes_ = 0;
};

} // namespace berth::docker_sync
