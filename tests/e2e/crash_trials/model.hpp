#pragma once

// What the acknowledged requests of a crash trial say each volume must be.
//
// A worker owns its slots: one request at a time per slot, so a slot's state after
// the kill is either what the answered requests made (`known`) or, when a request
// was in flight at the kill, that request applied on top (`maybe`). A slot with a
// request in flight is frozen until the check after the restart settles it: no
// later request builds on a state nobody knows.
//
// The shared Docker volumes are mounted and unmounted by every worker at once, so
// their counts are bounds: a count is the acknowledged Mounts minus the acknowledged
// Unmounts, give or take the ones in flight. The shared CSI volume is published by
// every publisher at once, each at targets of its own, so each target is a slot.

#include <cstdint>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace berth::crash_trials {

/// A Docker volume as the checker compares it.
struct docker_view {
  bool exists = false;
  std::map<std::string, uint32_t> counts; ///< mount ID → count

  bool operator==(const docker_view& o) const {
    return exists == o.exists && counts == o.counts;
  }
};

/// A CSI volume as the checker compares it.
struct csi_view {
  bool exists = false;
  uint64_t capacity = 0;
  bool staged = false;
  std::set<std::string> targets; ///< published target paths
  std::string read_ahead;        ///< the mutable parameter readAheadKB, "" when unset

  bool operator==(const csi_view& o) const {
    return exists == o.exists && capacity == o.capacity && staged == o.staged
           && targets == o.targets && read_ahead == o.read_ahead;
  }
};

std::string describe(const docker_view& v);
std::string describe(const csi_view& v);

/// One volume owned by one worker.
template <class View>
struct slot {
  std::string name;
  View known;                ///< what the answered requests made
  std::optional<View> maybe; ///< the state if the request in flight at the kill happened

  bool frozen() const {
    return maybe.has_value();
  }
};

/// One mount ID of a shared Docker volume (guarded by shared_counts::mtx).
struct shared_count {
  uint64_t base = 0;          ///< the count the last check found
  uint64_t acked_mounts = 0;  ///< answered with success since
  uint64_t acked_unmounts = 0;
  uint64_t pending_mounts = 0;   ///< sent, not answered (or in flight at the kill)
  uint64_t pending_unmounts = 0;

  /// Counts no Unmount in flight has claimed: an Unmount is sent only for one of
  /// these, so none is ever the no-op of an ID berthd does not count.
  uint64_t unclaimed() const {
    return base + acked_mounts - acked_unmounts - pending_unmounts;
  }
  uint64_t lowest() const {
    return unclaimed();
  }
  uint64_t highest() const {
    return base + acked_mounts - acked_unmounts + pending_mounts;
  }
};

/// The shared CSI volume, which every publisher publishes at targets of its own at once:
/// bursts of publishes and unpublishes on one volume, which share its turns. Each target
/// is one publisher's, so its state is exact: published or not as the answers left it,
/// or as the request in flight at the kill would have.
struct shared_publications {
  std::string volume = "shared-csi";
  /// [publisher][k]: each slot's name is its target's name below `pods/shared/`.
  std::vector<std::vector<slot<bool>>> targets;
};

/// The shared volumes' counts, every worker's.
struct shared_counts {
  std::mutex mtx;
  std::map<std::string, std::map<std::string, shared_count>> volumes; ///< name → ID → count
};

} // namespace berth::crash_trials
