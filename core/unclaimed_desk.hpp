#pragma once

// What the admin API asks of the node agent in the cluster mode for `berthctl unclaimed`:
// the CSI volumes recorded on this node that no BerthVolume names, and the CSI snapshots
// that no BerthSnapshot names. berthd reports them and
// never removes them on its own (their data may be all that is left of a volume whose
// object was lost); an operator removes one with `berthctl unclaimed rm NAME`. A removal
// asks the API server first, a blocking call, so it runs on the agent's threads and
// answers through a callback: the admin API's Beast session never blocks.

#include <chrono>
#include <functional>
#include <string>
#include <vector>

#include <caf/error.hpp>
#include <caf/expected.hpp>

namespace berth {

/// The unclaimed CSI volumes and snapshots as of the node agent's last full LISTs.
struct unclaimed_volumes {
  std::vector<std::string> names;                   ///< sorted: volumes no BerthVolume names
  std::vector<std::string> snapshots;               ///< sorted: snapshots no BerthSnapshot names
  std::chrono::system_clock::time_point listed_at; ///< that LIST's time
};

class unclaimed_desk {
public:
  using removed_fn = std::function<void(caf::error)>;

  virtual ~unclaimed_desk() = default;

  /// The unclaimed volumes now; ec::unavailable before the agent's first LISTs of both kinds.
  virtual caf::expected<unclaimed_volumes> unclaimed() = 0;

  /// Removes CSI volume or snapshot `name` (its storage and its record), once the API
  /// server confirms that no BerthVolume (BerthSnapshot) of this node names it. `done` is called once, from any thread:
  /// no error, ec::not_found (no such CSI volume or snapshot here), ec::failed_precondition
  /// naming the object that claims it, ec::unavailable (the API server could not confirm; nothing
  /// was removed), or the volume's own refusal (still staged or published, say).
  virtual void remove_unclaimed(std::string name, removed_fn done) = 0;
};

} // namespace berth
