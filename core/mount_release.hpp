#pragma once

// The message that releases one Docker mount ID whose Unmount will never come, and
// why (docs/design.md, "Mount IDs dockerd forgot"). Core's, because the actors'
// vocabulary carries it and telemetry counts by its reasons; the rules that decide a
// release are actors/release_rules.hpp.

#include <cstdint>
#include <string>
#include <vector>

#include <caf/meta/type_name.hpp>

#include "core/volume_record.hpp"

namespace berth {

/// Why an ID is released: the label of berth_mount_ids_released_total{reason}.
/// Messages carry it as its underlying byte (CAF serializes enums so).
enum class release_reason : uint8_t {
  stale_instance, ///< made by an older dockerd, and its container does not run now
  container_gone, ///< its container no longer exists
  died,           ///< its container died, and no Unmount came within the grace period
  operator_request, ///< `berthctl release NAME ID`
};

/// "stale_instance", "container_gone", "died", "operator".
const char* to_string(release_reason reason);

/// Every to_string(release_reason), in declaration order: the labels of
/// berth_mount_ids_released_total.
const std::vector<std::string>& release_reason_names();

/// The message that drops one mount ID's whole count (registry and volume actor:
/// `atom::release`), sent by the dockerd reconciliation (decided by
/// decide_releases) or for an operator (check_operator_release). The volume
/// decides again at its turn: an automatic release (`if_unchanged`) drops
/// nothing when the committed record's origin of `id` differs from the one
/// decided on (a Mount came since), so a decision never takes a newer Mount.
struct mount_release {
  std::string id;
  release_reason reason = release_reason::stale_instance;
  /// Automatic releases: drop only if records's origins[id] still equals `seen`.
  bool if_unchanged = true;
  mount_id_origin seen;
  /// The line logged when it is dropped (release::log, or the operator's).
  std::string log;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, mount_release& x) {
  return f(caf::meta::type_name("mount_release"), x.id, x.reason, x.if_unchanged, x.seen,
           x.log);
}

} // namespace berth
