// The driver of a transition's record (actors/machine/record_transaction.hpp): it
// carries out what the machine answers (save, erase, undo) and feeds it the outcome,
// until the transition ends.

#include "actors/detail/engine.hpp"

namespace berth::detail {

void transition_words::log_failure(const std::string& name, const std::string& line,
                                   const caf::error& err) const {
  if (logs_failures) {
    spdlog::error("volume {}: {}: {}", name, line, describe(err));
  }
}

namespace {

/// What the volume does with the store's answer `err` to the save or erase of `tx`.
void on_stored(self_ptr self, const std::shared_ptr<record_transaction>& tx, const caf::error& err,
               const std::shared_ptr<const transition_words>& words,
               const std::shared_ptr<const undo_fn>& undo,
               const std::function<void(record_transaction::ended)>& end) {
  auto step = tx->persisted(err, self->state.rec);
  const auto& name = tx->pending().name;
  if (std::holds_alternative<record_transaction::undo>(step)) {
    words->log_failure(name, words->unsaved_line() + ", " + words->undoing, err);
  } else if (err) {
    words->log_failure(name, words->unsaved_line(), err);
  }
  carry_out(self, tx, std::move(step), words, undo, end);
}

} // namespace

void carry_out(self_ptr self, const std::shared_ptr<record_transaction>& tx,
               record_transaction::next_step step,
               const std::shared_ptr<const transition_words>& words,
               const std::shared_ptr<const undo_fn>& undo,
               const std::function<void(record_transaction::ended)>& end) {
  auto stored = [self, tx, words, undo, end](const caf::error& err) {
    on_stored(self, tx, err, words, undo, end);
  };
  if (auto* save = std::get_if<record_transaction::save>(&step)) {
    persist(self, save->next, std::move(stored));
  } else if (auto* erase = std::get_if<record_transaction::erase>(&step)) {
    persist_erase(self, erase->name, std::move(stored));
  } else if (auto* back = std::get_if<record_transaction::undo>(&step)) {
    (*undo)(back->unsaved, [self, tx, words, undo, end](const caf::error& uerr) {
      if (uerr) {
        spdlog::error("volume {}: undoing {} failed: {}", tx->pending().name, words->what,
                      describe(uerr));
      }
      carry_out(self, tx, tx->undone(), words, undo, end);
    });
  } else {
    end(std::get<record_transaction::ended>(std::move(step)));
  }
}

} // namespace berth::detail
