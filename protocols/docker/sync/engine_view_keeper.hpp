#pragma once

// What berth knows of dockerd now, kept up to date from the Docker Engine API for the
// release rules (actors/release_rules.hpp): the dockerd instance answering --docker-api,
// its container list, the recent die and destroy events, the mount-ID map from
// config.v2.json. Single-threaded: the reconciliation's worker owns it.

#include <deque>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "actors/release_rules.hpp"
#include "core/telemetry/telemetry.hpp"
#include "protocols/docker/engine/engine_api.hpp"
#include "protocols/docker/sync/mount_map.hpp"

namespace berth::docker_sync {

/// The key of the dockerd that answered, when berth can tell which process it is (its pid
/// and start time, and it is dockerd itself); none otherwise.
std::optional<dockerd_key> key_of(const docker_engine::engine_instance& who);

/// The rules' form of one Engine API container.
container_info to_container_info(const docker_engine::container& c);

/// Keeps an engine_view current.
class engine_view_keeper {
public:
  /// Reads the mount map of a DockerRootDir (tests give a fake).
  using map_reader = std::function<caf::expected<mount_map>(const std::string& root_dir)>;

  /// @param api the Engine API; null when --docker-api is off (the view stays empty).
  /// @param stats where docker_engine_up is set; may be null.
  engine_view_keeper(std::shared_ptr<docker_engine::engine_api> api,
                     std::shared_ptr<telemetry> stats, map_reader read_map = read_mount_map);

  /// Whether there is an API to ask.
  bool enabled() const {
    return api_ != nullptr;
  }

  /// Asks dockerd for its container list (taken at `now`) and re-reads the mount map
  /// (DockerRootDir from /info, asked again for a new instance); an ID's tie outlives its
  /// container's config.v2.json (a `docker rm` deletes it), up to
  /// limits::max_retained_mount_ids. On failure the view has no
  /// current dockerd until dockerd answers again. Returns the error (logged by the caller).
  caf::error refresh(release_clock::time_point now);

  /// The events stream opened from `who`.
  void opened(const docker_engine::engine_instance& who);

  /// dockerd stopped answering (a call or the events stream failed): nothing is released
  /// until it answers again.
  void down();

  /// Keeps a die or destroy event (others are ignored); returns true when kept. Events
  /// older than limits::docker_event_window before `now`, and beyond
  /// limits::max_docker_events_kept, are dropped.
  bool add_event(const docker_engine::container_event& ev, release_clock::time_point now);

  /// True once since the last call when a dockerd instance was seen that differs from the
  /// one seen before (the first one too): its Mounts start afresh, reconcile.
  bool take_new_instance();

  /// The view for the rules (without `alive`, which the caller fills from the records).
  const engine_view& view() const {
    return view_;
  }

  /// The API's description for logs.
  std::string describe() const;

private:
  void seen(const docker_engine::engine_instance& who);
  /// `fresh` (the last read) plus the ties earlier reads had that it lacks.
  mount_map merge_map(mount_map fresh);
  void prune(release_clock::time_point now);

  std::shared_ptr<docker_engine::engine_api> api_;
  std::shared_ptr<telemetry> stats_;
  map_reader read_map_;
  engine_view view_;
  std::optional<dockerd_key> last_;   ///< the last dockerd identified
  bool new_instance_ = false;
  std::string root_dir_;              ///< DockerRootDir of `last_`
  /// Ties read before that the last read lacked (the container was removed, or dockerd
  /// cleared the ID at an Unmount): mount IDs are random and never reused, so the tie
  /// still holds. In `view_.container_of` too; oldest first in `retained_order_`.
  mount_map retained_;
  std::deque<std::string> retained_order_;
  bool map_warned_ = false;
  bool unknown_warned_ = false;
};

} // namespace berth::docker_sync
