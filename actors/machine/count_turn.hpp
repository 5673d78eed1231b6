#pragma once

// Docker Mounts and Unmounts that only change counts, gathered into one turn of their
// volume (docs/design.md, "Counts share a turn"): each is applied, in order, to the
// record as the ones before it leave it, and the turn saves one record for all. A
// change that needs the host (the first Mount, the last Unmount) does not join; it
// runs in a turn of its own, as it always did. No actor in it: the engine feeds it the
// steps waiting behind the running one (actors/volume_engine.cpp).

#include <string>
#include <vector>

#include "actors/machine/turns.hpp"
#include "actors/volume_rules.hpp"

namespace berth {

class count_turn {
public:
  /// What became of one change of the turn, in the order they joined.
  struct outcome {
    caf::error err;       ///< refused (its guards, check_mount): answered with it
    std::string line;     ///< the log line once the record is saved (empty: none)
    bool changes = false; ///< it changed the record (an unknown ID's Unmount does not)
  };

  /// A turn on the committed record `before`; Mounts are stamped `now`.
  count_turn(volume_record before, release_clock::time_point now);

  /// Applies `change` when it only changes counts (or is refused by check_mount, or is
  /// an Unmount of an unknown ID): true, and it has its outcome. False when it needs
  /// the host: nothing changed, and it must not join.
  bool admit(const count_change& change);

  /// A change that joined but that its guards refuse: it keeps its place, with `err`.
  void refuse(caf::error err);

  /// The record after every admitted change.
  const volume_record& next() const { return next_; }

  /// Whether any admitted change changed the record (else there is nothing to save).
  bool changed() const { return changed_; }

  const std::vector<outcome>& outcomes() const { return outcomes_; }

private:
  volume_record next_;
  release_clock::time_point now_;
  bool changed_ = false;
  std::vector<outcome> outcomes_;
};

} // namespace berth
