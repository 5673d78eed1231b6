#pragma once

// The state of one volume, as one plain machine: its committed record, its turns, the
// transition under way, and its backend calls. No actor and no clock of its own: the
// driver (actors/volume_engine.cpp, volume_transaction.cpp, volume_calls.cpp) feeds it
// events with the time they happened (a step queued, a step's turn ended, a transition's
// work, save or undo done, a call begun or reported back, the timer fired) and carries
// out what each answers. Its state is private, and its methods keep what the engine
// once kept by comment:
// - one transition at a time: begin() hands back a second one instead of starting it;
// - only a durable change writes the record: stored() is the one input that commits;
// - a hung call blocks only this volume: no call begins beside a hung one, and every
//   guard refuses with the hung call named;
// - nothing is served before the volume's first reconciliation settles.

#include <chrono>
#include <cstddef>
#include <deque>
#include <optional>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "actors/machine/call_slot.hpp"
#include "actors/machine/committed_record.hpp"
#include "actors/machine/running_transition.hpp"
#include "actors/machine/turns.hpp"

namespace berth {

class volume_machine {
public:
  using clock = call_slot::clock;

  volume_machine() : calls_(clock::duration::zero()) {}

  /// A volume whose record is `rec`; each backend call may take `backend_timeout`.
  /// `reconciles_first`: loaded from state, it serves nothing until its first
  /// reconciliation settles (reconciled(), first_reconcile_over()).
  volume_machine(committed_record rec, clock::duration backend_timeout, bool reconciles_first)
      : rec_(std::move(rec)), reconciled_(!reconciles_first),
        first_reconcile_pending_(reconciles_first), calls_(backend_timeout) {}

  /// The committed record: the durable one, and the only one a request is judged against.
  const committed_record& record() const { return rec_; }

  // -- guards -------------------------------------------------------------------------

  /// Why a request of `owner` (creating, or not) cannot act on the volume as it is at
  /// `now`: no such volume, another owner's record, not reconciled yet; none when it can.
  caf::error state_refusal(record_owner owner, bool creates, const std::string& what,
                           clock::time_point now) const;

  /// state_refusal() for a queued step, and, for a creation, a hung call: a hung Remove
  /// may still change what exists. The step's caller is the driver's to check.
  caf::error refusal(const queued_step& step, clock::time_point now) const;

  /// ec::aborted: the volume's hung call (named, with its start) has not returned, so
  /// `what` does not start. Only while !certain().
  caf::error still_hung(const std::string& what, clock::time_point now) const {
    return calls_.still_hung(rec_->name, what, now);
  }

  /// Whether `err` is the refusal of `what` beside a hung call (still_hung()).
  bool refused_beside_hung(const caf::error& err) const;

  // -- turns --------------------------------------------------------------------------

  /// `step` waits behind the steps queued before it.
  void push(queued_step step) { steps_.push(std::move(step)); }

  /// The step whose turn it is, if no step runs: it runs until finish().
  std::optional<queued_step> next() { return steps_.next(); }

  /// The steps that join the running one's turn (turns::take_joining, take_while).
  std::vector<queued_step> take_joining(const std::string& running, size_t max) {
    return steps_.take_joining(running, max);
  }
  template <class Joins>
  std::vector<queued_step> take_while(size_t max, Joins joins) {
    return steps_.take_while(max, std::move(joins));
  }

  /// The running step ended. A step whose transition still runs has not ended: that is
  /// a bug of the driver, and the step keeps its turn.
  caf::error finish();

  /// No step runs or waits.
  bool idle() const { return steps_.idle(); }

  /// Takes every waiting step (the volume retires and refuses them).
  std::deque<queued_step> take_waiting() { return steps_.take_waiting(); }

  // -- the first reconciliation -------------------------------------------------------

  /// The record agrees with the host.
  bool reconciled() const { return reconciled_; }

  /// A reconciliation settled with the record and the host agreeing.
  void reconciled_with_host() { reconciled_ = true; }

  /// The first reconciliation is over (settled, failed, or the volume retires): true the
  /// first time only, when the driver counts it out of reconcile_pending.
  bool first_reconcile_over() { return std::exchange(first_reconcile_pending_, false); }

  // -- the running transition ---------------------------------------------------------

  /// `r` is the running transition, whose work the driver carries out next. When one
  /// runs already, `r` is handed back, not started: the driver ends it as a bug.
  std::optional<running_transition> begin(running_transition r);

  /// A transition runs.
  bool transition_running() const { return running_.has_value(); }

  /// The running one (only while transition_running()).
  const running_transition& running() const { return *running_; }

  /// Its work ended with `err`: what the driver does next.
  record_transaction::next_step work_done(const caf::error& err);

  /// The store answered its save or erase: on success, the change is committed here.
  record_transaction::next_step stored(const caf::error& err);

  /// The work that undoes its side effect, from the record that was not saved.
  work_plan undo_of(const volume_record& unsaved) const { return running_->undo(unsaved); }

  /// Its undo ended (the driver logs a failure of it).
  record_transaction::next_step undone() { return running_->tx.undone(); }

  /// It ended: the machine lets it go, and the driver runs its end.
  running_transition end() { return *std::exchange(running_, std::nullopt); }

  // -- backend calls (call_slot) ------------------------------------------------------

  /// No call is hung.
  bool certain() const { return calls_.certain(); }

  /// Whether the call `what` may begin at `now`: none, or still_hung(); `beside_hung`
  /// for the one call allowed beside a hung one (the lazy detach).
  caf::error may_begin_call(const std::string& what, bool beside_hung,
                            clock::time_point now) const {
    return calls_.may_begin(rec_->name, what, beside_hung, now);
  }

  /// The token of the next call.
  uint64_t reserve_call() { return calls_.reserve(); }

  /// `c`, submitted under `token` at `now`, is the current call: when to arm the timer.
  std::optional<clock::time_point> begin_call(uint64_t token, call_slot::submitted c,
                                              clock::time_point now) {
    return calls_.begin(token, std::move(c), now);
  }

  /// The call of `token` reported back.
  auto call_done(uint64_t token) { return calls_.done(token); }

  /// The timer fired at `now`.
  auto timer_fired(clock::time_point now) { return calls_.timer_fired(now); }

  /// The expired call `e` was running when abandoned: hung from `now`. Whether the
  /// volume became uncertain by it.
  bool hang(call_slot::expired e, clock::time_point now) { return calls_.hang(std::move(e), now); }

private:
  committed_record rec_;
  bool reconciled_ = true;
  bool first_reconcile_pending_ = false;
  turns steps_;
  std::optional<running_transition> running_;
  call_slot calls_;
};

} // namespace berth
