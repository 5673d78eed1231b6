#pragma once

// The record of one transition, from the end of its work to its end, as a plain state
// machine: no actor, no continuation. It keeps docs/design.md's "All or nothing, across
// crashes" by its methods: the committed record changes only once the change is durable
// (persisted() is the only input that commits), and a side effect whose record could not
// be saved is undone before the transition ends. Its inputs are the work's outcome, the
// durable store's answer and the undo's; each answers what the driver
// (actors/detail/engine.hpp, transact_then) does next: save, erase, undo, or end.

#include <functional>
#include <string>
#include <variant>

#include "actors/machine/committed_record.hpp"
#include "core/errors.hpp"

namespace berth {

/// What a transition does to the committed record once its work succeeded.
enum class record_change {
  /// The record after the work, made from the committed one and the work's result, is
  /// saved, then committed.
  save,
  /// As save, but a record equal to the committed one is not saved again (a
  /// reconciliation that found the host as recorded).
  save_if_changed,
  /// The record is erased from the durable state, then forgotten: the volume is gone
  /// (a remove).
  erase,
  /// The work only reads (a filesystem grow, stats): nothing is saved or committed.
  none,
};

/// How a transition ended, for a continuation that must tell "not done" from "done,
/// but not saved".
enum class ending {
  failed,    ///< the work failed or did not start: no record was saved
  unsaved,   ///< the work was done, its record could not be saved (undone, if it has an undo)
  committed, ///< the record is committed (record_change::none: the work was done)
};

class record_transaction {
public:
  /// What the transition's description says about its record.
  struct plan {
    record_change change = record_change::save;
    bool creates = false;  ///< committing it makes the volume exist
    bool undoable = false; ///< its side effect can be undone when its record is not saved
  };

  // -- what the inputs answer ---------------------------------------------------------

  /// Store `next` durably, then give persisted() the store's answer. `next` is the
  /// record the commit takes: the store keeps this same one.
  struct save {
    shared_record next;
  };
  /// Erase the volume `name` from the durable state, then give persisted() the answer.
  struct erase {
    std::string name;
  };
  /// Undo the side effect (`unsaved`, the machine's own, is the record that was not
  /// saved), then call undone().
  struct undo {
    std::reference_wrapper<const volume_record> unsaved;
  };
  /// The transition is over: `err` is empty only when it ended committed.
  struct ended {
    ending how;
    caf::error err;
  };
  using next_step = std::variant<save, erase, undo, ended>;

  explicit record_transaction(plan p) : plan_(p) {}

  /// The work failed, or did not start: nothing was saved.
  next_step work_failed(caf::error err);

  /// The work succeeded. `after` makes the record after it from the committed one; it is
  /// asked only when the plan saves one.
  next_step work_succeeded(const committed_record& rec,
                           const std::function<volume_record(const volume_record&)>& after);

  /// The durable store answered the save or the erase: on success the change is
  /// committed to `rec` here and nowhere else.
  next_step persisted(const caf::error& err, committed_record& rec);

  /// The undo finished (its own failure is the driver's to log): the transition ends
  /// unsaved, with the store's error.
  next_step undone();

  /// The record being saved, or the one being erased: what the logs name.
  const volume_record& pending() const { return *pending_; }

private:
  enum class phase { working, storing, undoing, over };

  /// An input that does not belong to the phase: a bug of the driver, ended as such.
  next_step out_of_turn(const char* input);

  plan plan_;
  phase phase_ = phase::working;
  shared_record pending_ = std::make_shared<const volume_record>();
  caf::error store_error_;
};

} // namespace berth
