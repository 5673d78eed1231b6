// Docker Mounts and Unmounts that share a turn (docs/design.md, "Counts share a turn").
// The engine gathers them (count_turn, actors/volume_engine.cpp); this file saves the
// record they lead to once, then answers each caller:
//
//   count_turn: each change applied in order ─▶ one record saved ─▶ each caller answered
//                                                   │ not saved: every change fails
//
// No backend call: a change that needs the host never joins.

#include <spdlog/spdlog.h>

#include "actors/detail/transitions.hpp"

namespace berth::detail {

void run_count_changes(self_ptr self, std::vector<queued_step> steps, const count_turn& counts) {
  auto outcomes = counts.outcomes();
  auto answer_each = [self, steps = std::move(steps), outcomes](const caf::error& unsaved) mutable {
    for (size_t i = 0; i < steps.size(); ++i) {
      auto& out = outcomes[i];
      if (out.err) {
        steps[i].refuse(out.err);
      } else if (out.changes && unsaved) {
        steps[i].refuse(unsaved);
      } else {
        if (!out.line.empty()) {
          spdlog::info("{}", out.line);
        }
        steps[i].counted(*self->state.rec());
      }
    }
  };
  if (!counts.changed()) {
    answer_each({});
    finish(self);
    return;
  }
  transition<none> t;
  t.what = "count change of " + std::to_string(outcomes.size()) + " Mounts and Unmounts";
  t.apply = [next = counts.next()](const volume_record&, none) { return next; };
  // The persistence actor logs the write that failed; each caller gets the error.
  t.logs_failures = false;
  transact<none>(self, std::move(t), [answer_each](caf::expected<none> out) mutable {
    answer_each(out ? caf::error{} : out.error());
  });
}

} // namespace berth::detail
