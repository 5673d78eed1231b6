#pragma once

// Which Docker mount IDs of one volume may be released when dockerd's Unmount
// never arrives (docs/design.md, "Mount IDs dockerd forgot"), as pure functions
// of plain inputs and a clock value passed in: unit-tested without actors,
// dockerd or sleeping.
//
// What the rules can know (checked against dockerd 20.10; see the same section):
// a plugin mount ID is a random ID per mount point, not the container ID, and
// the Engine API never shows it. Only dockerd's
// DockerRootDir/containers/<cid>/config.v2.json (MountPoints[].ID) ties an ID
// to its container, so that map is an optional input. Without it (or for an ID
// it lacks) the rules decide per volume, from which containers mount the
// volume by name, and only where that cannot take a mount that is in use.
//
// Nothing here changes a record: the caller turns each `release` into a
// journalled transition of the volume actor, logs `release::log` and counts
// `to_string(release::reason)` into berth_mount_ids_released_total{reason}.

#include <chrono>
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include <caf/expected.hpp>
#include <caf/meta/type_name.hpp>

#include "core/mount_release.hpp"
#include "core/volume_record.hpp"

namespace berth {

/// The clock of every time below (Mount times, event times, now).
using release_clock = std::chrono::system_clock;

/// How long after a container's `die` event an ID of it may still be
/// Unmounted by dockerd before the rules take it (`--die-grace` later).
inline constexpr std::chrono::seconds default_die_grace{10};

/// One dockerd lifetime, as an opaque key compared for equality only, e.g.
/// "4242@981273" built from engine_instance{pid, start_ticks} (SO_PEERCRED +
/// /proc/PID/stat) by the Docker adapter. "" means no dockerd instance is
/// recorded: the Mount came from another caller (ECS import, a client with its
/// own IDs) or from state older than these origins. /info's engine ID does not do:
/// it is the same across dockerd restarts.
using dockerd_key = std::string;

/// What berth holds for one mount ID of a volume.
struct mount_id_state {
  std::string id;
  uint32_t count = 0;
  dockerd_key instance;                      ///< the dockerd whose Mounts made the count
  release_clock::time_point last_mounted{};  ///< berth's clock at the last counted Mount
};

/// A container's state as /containers/json reports it.
enum class container_state {
  created, running, paused, restarting, removing, exited, dead, unknown
};

/// Parses Docker's State string ("running", "exited", ...); anything else is `unknown`.
container_state parse_container_state(const std::string& text);

/// True for the states in which a container may be using its mounts: running,
/// paused, restarting and unknown (the safe side: a mount is kept).
bool uses_its_mounts(container_state state);

/// One container of /containers/json?all=1.
struct container_info {
  std::string id;
  container_state state = container_state::unknown;
  /// Names of the volumes it mounts (Mounts[] of Type "volume"). Matched by
  /// name only, whatever the Driver field says: dockerd's volume names are
  /// unique across drivers, and a driver spelled otherwise ("berth" vs
  /// "berth:latest") must never make berth release under a running container.
  std::vector<std::string> volumes;
};

/// One /containers/json?all=1 answer.
struct container_list {
  dockerd_key instance;                  ///< the dockerd that answered
  release_clock::time_point taken_at{};  ///< berth's clock when the request was sent
  std::vector<container_info> containers;
};

/// A container event from GET /events.
struct container_event {
  enum kind_t { die, destroy };
  kind_t kind = die;
  std::string container_id;          ///< Actor.ID
  release_clock::time_point at{};    ///< timeNano
};

/// Everything the rules know of dockerd.
struct engine_view {
  /// The dockerd running now; none while it is down or not yet identified:
  /// then nothing is released.
  std::optional<dockerd_key> current;
  /// The last container list; used only when `current` answered it. A die or
  /// destroy event later than `taken_at` overrides a container's listed state.
  std::optional<container_list> list;
  /// Die and destroy events seen (any order).
  std::vector<container_event> events;
  /// Mount ID -> container ID from config.v2.json MountPoints[].ID; none when
  /// DockerRootDir cannot be read. An ID it lacks is decided per volume.
  std::optional<std::map<std::string, std::string>> container_of;
  /// dockerd instances other than `current` whose process still runs (the pid exists
  /// with that start time). --docker-api may name another dockerd than the one that
  /// uses the plugin: neither its containers nor its events show here, so an ID one of
  /// these made is never released automatically (only an operator may).
  std::set<dockerd_key> alive;
};

/// The key of dockerd process `pid` started `start_ticks` clock ticks after boot
/// (/proc/PID/stat starttime): "PID@STARTTIME". The one spelling of a dockerd_key,
/// used by the Docker adapter for the plugin connection's peer and by the engine
/// view for the dockerd that answers --docker-api.
dockerd_key make_dockerd_key(int pid, uint64_t start_ticks);

/// The IDs `rec` counts, each with its origin (an ID without one: instance "",
/// last_mounted the epoch).
std::vector<mount_id_state> mount_id_states(const volume_record& rec);

/// The record's spelling of a state's origin (instance, last_mounted in ms).
mount_id_origin origin_of(const mount_id_state& s);

/// One ID to release: drop `count` Mounts of `id` (the whole count).
struct release {
  std::string id;
  uint32_t count = 0;
  release_reason reason = release_reason::stale_instance;
  /// Its container: the map's, or for a per-volume `died` the one container
  /// mounting the volume; "" when the rule needed no container (per volume).
  std::string container;
  /// "volume kv released mount ID c89a… (reason died, count 1 dropped): ..."
  std::string log;
};

/// The automatic releases for volume `volume` holding `ids`, as of `now`.
/// An ID whose container uses its mounts now is never released, nor an ID
/// without a recorded dockerd instance that the map does not name (ECS,
/// another caller's IDs), nor an ID made by a dockerd in `view.alive` (another
/// live dockerd), nor anything while `view.current` is none.
/// The caller decides again when the release transition's turn comes, on the
/// committed record: a Mount may have replaced an older dockerd's counts since.
std::vector<release> decide_releases(const std::string& volume,
                                     const std::vector<mount_id_state>& ids,
                                     const engine_view& view, release_clock::time_point now,
                                     std::chrono::milliseconds die_grace = default_die_grace);

/// An operator's release of `id` (berthctl release). ec::not_found when the
/// volume counts no such ID; ec::in_use naming the container when the API
/// reports the ID's container running (per the map), or, when the map does
/// not name it, any container that mounts this volume. Allowed when dockerd
/// cannot be asked (the operator decides; the log says it was not checked).
caf::expected<release> check_operator_release(const std::string& volume,
                                              const std::vector<mount_id_state>& ids,
                                              const std::string& id, const engine_view& view);

/// A Mount's effect on one ID's state.
struct mount_tagging {
  mount_id_state next;   ///< the ID's state after the Mount
  uint32_t replaced = 0; ///< counts of an older dockerd dropped instead of added to
};

/// The ID's state after one Mount from `mounter` ("" when not a dockerd berth
/// identified) at `now`; `existing` is the ID's state before (none: new ID). A
/// Mount from another dockerd than the one that made the counts replaces them
/// (count 1): that dockerd is gone, and a container with a restart policy
/// mounts again with the ID kept in config.v2.json. Counts are added when the
/// instance is the same, or when either side is "" (berth cannot tell callers
/// apart, so it never undercounts); a mixed count is tagged "" and never
/// released automatically.
mount_tagging count_mount(const std::optional<mount_id_state>& existing,
                          const std::string& id, const dockerd_key& mounter,
                          release_clock::time_point now);

} // namespace berth
