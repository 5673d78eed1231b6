#pragma once

// A transition of one volume under way, with its result's type erased: its words, its
// record's plan and transaction, and the functions its typed description gave (the
// record after the work, the undo, the committed line, the end). The engine holds one
// at a time (volume_state::running) and feeds its record_transaction the outcome of the
// work, of the save or erase, and of the undo (actors/volume_transaction.cpp); each
// answers what the engine does next. No part of it calls the next part by itself.

#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "actors/machine/late_settle.hpp"
#include "actors/machine/record_transaction.hpp"
#include "actors/machine/transition_work.hpp"

namespace berth {

/// The words of a transition's log lines.
struct transition_words {
  std::string what;    ///< "mount", "stage at /p", for the logs
  std::string undoing; ///< "unmounting again", for the log
  /// The error lines, after "volume NAME: ". Empty: "<what> failed" when the work
  /// fails, "<what> not saved" when its record cannot be saved.
  std::string failed;
  std::string unsaved;
  /// false: a failure reaches the caller but is not logged here (its description
  /// says why).
  bool logs_failures = true;

  /// The line of a failed work, and of a record not saved.
  std::string failed_line() const { return failed.empty() ? what + " failed" : failed; }
  std::string unsaved_line() const { return unsaved.empty() ? what + " not saved" : unsaved; }

  /// Logs `err` after "volume NAME: " and `line`, unless failures are not logged here.
  void log_failure(const std::string& name, const std::string& line, const caf::error& err) const;
};

/// Undoes a transition's side effect when its record cannot be saved: the work that
/// does it, from the record that was not saved.
using undo_fn = std::function<work_plan(const volume_record& unsaved)>;

struct running_transition {
  std::shared_ptr<const transition_words> words;
  /// What becomes of the record; the transaction starts from it.
  record_transaction tx{record_transaction::plan{}};
  /// The record after the work, from the committed one (the work's result read in).
  std::function<volume_record(const volume_record&)> apply;
  undo_fn undo; ///< empty: nothing to undo
  /// The line once committed, from the record saved or erased ("": none).
  std::function<std::string(const volume_record&)> committed;
  /// Runs once the transition is over, after the engine let it go: with none and
  /// ending::committed, or with the error and how it ended. It ends the step, or starts
  /// another transition in it.
  std::function<void(caf::error, ending)> end;
};

/// A transition ready to run: the running transition and the work the driver carries out
/// first.
struct planned_transition {
  running_transition transition;
  work_plan work;
};

/// What settles a call that succeeded after its timeout (late_settle.hpp), decided from
/// the record of its turn.
struct settlement {
  /// The transition that undoes or adopts the effect; the driver gives it its end. None:
  /// the record agrees already.
  std::optional<planned_transition> run;
  /// The volume is reconciled with the host too (in a turn of its own after `run`; in this
  /// one when there is none): for an effect the record cannot express (a late unmount,
  /// unstage or unpublish).
  bool reconcile = false;
};

} // namespace berth
