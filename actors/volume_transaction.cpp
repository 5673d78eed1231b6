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

/// The running transition is over: the engine lets it go, then runs its end.
void end_running(self_ptr self, record_transaction::ended e) {
  auto r = std::move(*self->state.running);
  self->state.running.reset();
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
  auto& r = *st.running;
  if (err) {
    if (refused_beside_hung(st, err)) {
      log_failed(st, r.words->what, err);
    } else {
      r.words->log_failure(st.rec->name, r.words->failed_line(), err);
    }
    carry(self, r.tx.work_failed(err));
    return;
  }
  carry(self, r.tx.work_succeeded(st.rec, r.apply));
}

/// The store answered the save or the erase of the running transition's record.
void on_stored(self_ptr self, const caf::error& err) {
  auto& r = *self->state.running;
  auto step = r.tx.persisted(err, self->state.rec);
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
  auto& r = *self->state.running;
  if (err) {
    spdlog::error("volume {}: undoing {} failed: {}", r.tx.pending().name, r.words->what,
                  describe(err));
  }
  carry(self, r.tx.undone());
}

/// Carries out `step` of the running transition.
void carry(self_ptr self, record_transaction::next_step step) {
  auto stored = [self](const caf::error& err) { on_stored(self, err); };
  if (auto* save = std::get_if<record_transaction::save>(&step)) {
    persist(self, save->next, std::move(stored));
  } else if (auto* erase = std::get_if<record_transaction::erase>(&step)) {
    persist_erase(self, erase->name, std::move(stored));
  } else if (auto* back = std::get_if<record_transaction::undo>(&step)) {
    auto undo = self->state.running->undo(back->unsaved);
    run_work(self, undo, [self](const caf::error& err) { on_undone(self, err); });
  } else {
    end_running(self, std::get<record_transaction::ended>(std::move(step)));
  }
}

} // namespace

void begin_transition(self_ptr self, running_transition r, const work_plan& work) {
  if (self->state.running) {
    // One transition at a time: a second one here is a bug of the engine, refused rather
    // than let overwrite the one whose outcome is still on its way.
    r.end(make_error(ec::internal,
                     "volume " + self->state.rec->name + ": " + r.words->what + " began while "
                       + self->state.running->words->what + " was still running"),
          ending::failed);
    return;
  }
  self->state.running.emplace(std::move(r));
  run_work(self, work, [self](const caf::error& err) { on_work_done(self, err); });
}

} // namespace berth::detail
