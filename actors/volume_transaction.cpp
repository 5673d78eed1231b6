// The driver of the volume's running transition (actors/machine/running_transition.hpp):
// it carries out the work, then what the transition's record_transaction answers (save,
// erase, undo), and feeds each outcome back, until the transition ends. Every outcome
// comes back as an event to the one running transition; none carries the next step.

#include "actors/detail/engine.hpp"

namespace berth {

void transition_words::log_failure(const std::string& name, const std::string& line,
                                   const caf::error& err) const {
  if (logs_failures) {
    spdlog::error("volume {}: {}: {}", name, line, describe(err));
  }
}

} // namespace berth

namespace berth::detail {

namespace {

void carry(self_ptr self, record_transaction::next_step step);

/// The running transition is over: the machine lets it go, then its end runs.
void end_running(self_ptr self, record_transaction::ended e) {
  auto r = self->state.machine.end();
  if (e.how == ending::committed && r.committed) {
    if (auto line = r.committed(r.tx.pending()); !line.empty()) {
      spdlog::info("{}", line);
    }
  }
  r.end(std::move(e.err), e.how);
}

/// The work of the running transition ended with `err`.
void on_work_done(self_ptr self, const caf::error& err) {
  auto& st = self->state;
  if (err) {
    const auto& words = *st.machine.running().words;
    if (st.machine.refused_beside_hung(err)) {
      log_failed(st, words.what, err);
    } else {
      words.log_failure(st.rec()->name, words.failed_line(), err);
    }
  }
  carry(self, st.machine.work_done(err));
}

/// The store answered the save or the erase of the running transition's record.
void on_stored(self_ptr self, const caf::error& err) {
  auto& machine = self->state.machine;
  auto step = machine.stored(err);
  const auto& r = machine.running();
  const auto& name = r.tx.pending().name;
  if (std::holds_alternative<record_transaction::undo>(step)) {
    r.words->log_failure(name, r.words->unsaved_line() + ", " + r.words->undoing, err);
  } else if (err) {
    r.words->log_failure(name, r.words->unsaved_line(), err);
  }
  carry(self, std::move(step));
}

/// The undo of the running transition's side effect ended with `err`.
void on_undone(self_ptr self, const caf::error& err) {
  auto& machine = self->state.machine;
  if (err) {
    const auto& r = machine.running();
    spdlog::error("volume {}: undoing {} failed: {}", r.tx.pending().name, r.words->what,
                  describe(err));
  }
  carry(self, machine.undone());
}

/// Carries out `step` of the running transition.
void carry(self_ptr self, record_transaction::next_step step) {
  auto stored = [self](const caf::error& err) { on_stored(self, err); };
  if (auto* save = std::get_if<record_transaction::save>(&step)) {
    persist(self, std::move(save->next), std::move(stored));
  } else if (auto* erase = std::get_if<record_transaction::erase>(&step)) {
    persist_erase(self, erase->name, std::move(stored));
  } else if (auto* back = std::get_if<record_transaction::undo>(&step)) {
    auto undo = self->state.machine.undo_of(back->unsaved);
    run_work(self, undo, [self](const caf::error& err) { on_undone(self, err); });
  } else {
    end_running(self, std::get<record_transaction::ended>(std::move(step)));
  }
}

} // namespace

void begin_transition(self_ptr self, planned_transition p) {
  auto& machine = self->state.machine;
  if (auto refused = machine.begin(std::move(p.transition))) {
    // One transition at a time: a second one here is a bug of the engine, refused rather
    // than let overwrite the one whose outcome is still on its way.
    refused->end(make_error(ec::internal,
                            "volume " + self->state.rec()->name + ": " + refused->words->what
                              + " began while " + machine.running().words->what
                              + " was still running"),
                 ending::failed);
    return;
  }
  run_work(self, p.work, [self](const caf::error& err) { on_work_done(self, err); });
}

} // namespace berth::detail
