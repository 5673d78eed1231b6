#pragma once

// The backend calls of one volume, as a plain state machine: no actor, no clock of
// its own. Its inputs are a call that begins, a call that reported back, and the
// volume's timer firing, each with the time it happened; its outputs say what the
// driver (actors/volume_calls.cpp) does next: run a continuation, arm the timer,
// abandon a call to the executor, settle a call that returned late.
//
// It keeps, by its methods, what docs/design.md ("A hung call blocks only its own
// volume") asks: one call at a time, and none beside a hung one except the lazy detach
// that stands in for a hung unmount. One timer serves every call: CAF 0.17 cannot
// cancel a delayed message, and its clock keeps each one (and a reference to the actor)
// until it is due, so a timer per call would hold memory for the rate of calls times
// the timeout. When the timer fires early for the current call (it was armed for an
// earlier one), it is armed again for the rest.

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <variant>

#include "actors/machine/late_settle.hpp"
#include "backends/task_runner.hpp"
#include "core/errors.hpp"
#include "core/telemetry/backend_call.hpp"

namespace berth {

class call_slot {
public:
  using clock = std::chrono::steady_clock;
  using continuation = std::function<void(caf::error)>;

  /// A call to begin: what the driver submitted to the executor under a token from
  /// reserve().
  struct submitted {
    backend_call kind;   ///< its metric label and the words logs and timeouts name it by
    std::string started; ///< RFC 3339, when it was submitted
    task_runner::ticket ticket;
    continuation then; ///< runs once with its outcome: its error, or a timeout
    late_settle settle; ///< settles it if it lands after its timeout; empty: nothing to
  };

  /// A call that timed out and has not returned. While one exists the volume is
  /// *uncertain*: no second call begins.
  struct hung_call {
    backend_call kind;
    std::string started;
    clock::time_point since; ///< when it timed out
    clock::time_point began; ///< when it began (its duration, when it returns)
    late_settle settle;
  };

  // -- what the inputs answer ---------------------------------------------------------

  /// The current call reported back: run `then` with its error.
  struct finished {
    backend_call kind;
    clock::time_point began;
    continuation then;
  };
  /// A hung call reported back, late.
  struct returned_late {
    hung_call call;
    bool certain_again; ///< it was the last hung call
  };
  /// A report of no call this slot waits for (its timeout was handled already, and it
  /// was not started): nothing to do.
  struct stray {};

  /// The timer fired and no call is current, or the current one is not due.
  struct not_due {
    std::optional<clock::time_point> arm_at; ///< the timer again, for the current call
  };
  /// The current call passed its deadline. The driver abandons `call.ticket` to the
  /// executor: a call that never started has done nothing and only times out; one that
  /// runs goes to hang(), then times out.
  struct expired {
    uint64_t token;
    submitted call;
    clock::time_point began;
  };

  explicit call_slot(clock::duration timeout) : timeout_(timeout) {}

  /// No call is hung.
  bool certain() const { return hung_.empty(); }
  /// No call is current.
  bool idle() const { return !current_; }

  /// ec::aborted for `what` of volume `name`: the oldest hung call (named, with its
  /// start and how long it has hung at `now`) has not returned, so `what` does not
  /// start. Only while !certain().
  caf::error still_hung(const std::string& name, const std::string& what,
                        clock::time_point now) const;

  /// Whether `what` may begin now: none, or still_hung() while a call is hung, unless
  /// it is the one call allowed beside a hung one (`beside_hung`).
  caf::error may_begin(const std::string& name, const std::string& what, bool beside_hung,
                       clock::time_point now) const {
    return certain() || beside_hung ? caf::error{} : still_hung(name, what, now);
  }

  /// The token of the next call; the driver's executor task reports back with it.
  uint64_t reserve() { return next_token_++; }

  /// `c`, submitted under `token` at `now`, is the current call. Returns when to arm the
  /// timer, or none when a timer is on its way already (it comes no later than this
  /// call's deadline, and re-arms then). Only while idle(), and after may_begin().
  std::optional<clock::time_point> begin(uint64_t token, submitted c, clock::time_point now);

  /// The call of `token` reported back.
  std::variant<finished, returned_late, stray> done(uint64_t token);

  /// The timer fired at `now`.
  std::variant<not_due, expired> timer_fired(clock::time_point now);

  /// The expired call `e` was running when it was abandoned: it is hung from `now`.
  /// Returns whether the volume became uncertain by it.
  bool hang(expired e, clock::time_point now);

  /// The hung calls, by token (normally at most one).
  const std::map<uint64_t, hung_call>& hung() const { return hung_; }

private:
  clock::duration timeout_;
  uint64_t next_token_ = 1;
  /// The current call: none, or one with its token and when it began.
  struct current_call {
    uint64_t token;
    submitted call;
    clock::time_point began;
  };
  std::optional<current_call> current_;
  bool timer_armed_ = false;
  std::map<uint64_t, hung_call> hung_;
};

} // namespace berth
