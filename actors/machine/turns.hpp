#pragma once

// The turns of one volume: the steps waiting to run, and the one running. A volume
// runs one transition at a time; this class keeps that by its methods, with no actor
// in it. The driver (actors/volume_engine.cpp) pushes steps, starts what next() gives,
// and calls finish() when a step ends.

#include <cstddef>
#include <deque>
#include <functional>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "core/caller.hpp"
#include "core/csi_types.hpp"
#include "core/errors.hpp"
#include "core/volume_record.hpp"

namespace berth {

/// Which records a queued step may start on (the guards of detail::enqueue).
enum class admits {
  existing, ///< an existing record of the step's owner
  creation, ///< none yet, or an existing one of the step's owner (an idempotent create)
  internal, ///< the volume's own work (a reconciliation): no guards; dropped once removed
  /// The settle of a call that returned late: no guards, and it runs whether the volume
  /// exists or not, since the settle decides from the record (a late create's storage
  /// must go although no record was ever made).
  settle,
};

/// A publish or an unpublish of one node path: steps of these waiting in a row, each of
/// another path, share one turn (turns::take_joining).
struct path_change {
  std::string target;
  std::optional<publish_request> publish; ///< none: an unpublish of `target`
};

/// A Docker Mount of `id` by dockerd `mount_by`, or an Unmount of `id`: steps of these
/// waiting in a row share one turn while each only changes counts (count_turn).
struct count_change {
  std::string id;
  std::optional<std::string> mount_by; ///< none: an Unmount
};

/// One step waiting for its turn.
struct queued_step {
  std::string what; ///< "mount (id c89a…)", for logs and refusals
  admits who = admits::existing;
  record_owner owner = record_owner::unset; ///< the namespace asking; unset for any
  caller from; ///< who waits; an acquiring request whose caller left is not started
  /// Answers the waiting caller(s) when a guard refuses the step (internal steps: none).
  std::function<void(const caf::error&)> refuse;
  std::function<void()> run; ///< the transition; it answers and ends with detail::finish()
  /// Set for a publish or unpublish, which may share its turn; then `acknowledge`
  /// answers its caller's success when it ran in a shared turn (`refuse`, its failure).
  std::optional<path_change> change;
  std::function<void()> acknowledge;
  /// Set for a Docker Mount or Unmount, which may share its turn; then `counted`
  /// answers its caller's success from the committed record when it did.
  std::optional<count_change> count;
  std::function<void(const volume_record&)> counted;
};

class turns {
public:
  /// `step` waits behind the steps queued before it.
  void push(queued_step step) { queue_.push_back(std::move(step)); }

  /// The step whose turn it is, if none is running: it runs from now until finish().
  std::optional<queued_step> next() {
    if (running_ || queue_.empty()) {
      return std::nullopt;
    }
    running_ = true;
    auto step = std::move(queue_.front());
    queue_.pop_front();
    return step;
  }

  /// The path changes waiting right behind the running one, whose path is `running`,
  /// that change other paths than it and than each other, in order, at most `max`:
  /// they run in its turn. Whatever waits behind the first step that cannot join
  /// keeps waiting, so no step overtakes one of another kind or of the same path.
  std::vector<queued_step> take_joining(const std::string& running, size_t max) {
    std::set<std::string> paths{running};
    return take_while(max, [&paths](const queued_step& step) {
      return step.change && paths.insert(step.change->target).second;
    });
  }

  /// The steps waiting right behind the running one while `joins` accepts each, in
  /// order, at most `max`: they run in its turn. The first step it refuses, and every
  /// step behind that one, keep waiting.
  template <class Joins>
  std::vector<queued_step> take_while(size_t max, Joins joins) {
    std::vector<queued_step> joined;
    while (running_ && !queue_.empty() && joined.size() < max && joins(queue_.front())) {
      joined.push_back(std::move(queue_.front()));
      queue_.pop_front();
    }
    return joined;
  }

  /// The running step ended.
  void finish() { running_ = false; }

  /// No step runs or waits.
  bool idle() const { return !running_ && queue_.empty(); }

  /// Takes every waiting step (the volume retires and refuses them).
  std::deque<queued_step> take_waiting() { return std::exchange(queue_, {}); }

private:
  std::deque<queued_step> queue_;
  bool running_ = false;
};

} // namespace berth
