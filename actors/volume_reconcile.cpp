// Reconciliation inside the volume actor (docs/design.md, "Reconciliation at
// start-up"): a loaded volume's first transition, and the settle of a late unmount,
// unstage or unpublish. The rules are in persistence/recovery/reconcile; this file decides where
// they run:
//
//   needs_host_work? ─no─▶ reconcile_volume on the actor thread ─▶ persist if changed
//        │ yes
//        ▼
//   executor (backend timeout) ─▶ reconcile_volume ─▶ persist if changed
//        │ timed out: the volume stays unreconciled; its late return reconciles again
//
// Either way it is one transition of the engine (record_change::save_if_changed).

#include <spdlog/spdlog.h>

#include "actors/detail/engine.hpp"
#include "backends/mountinfo.hpp"
#include "core/errors.hpp"
#include "persistence/recovery/reconcile.hpp"

namespace berth {

using namespace detail;

namespace {

/// Runs the reconciliation as a transition: `work` holds the record against the
/// host, and its record is saved if it changed. The volume serves from then on even
/// when that record cannot be saved (the host is as the work left it, and staying
/// unreconciled would refuse every request until a restart); a work that did not
/// finish leaves it unreconciled.
void reconcile_by(self_ptr self, work_of<volume_record> work) {
  transition<volume_record> t;
  t.what = "reconciliation";
  t.work = std::move(work);
  t.change = record_change::save_if_changed;
  t.apply = [](const volume_record&, const volume_record& reconciled) { return reconciled; };
  // No undo: what the work did to the host is what the record should have said.
  // No line once committed, as before: reconcile_volume logs what it does.
  t.failed = "reconciliation did not finish";
  t.unsaved = "reconciled record not saved";
  auto settled = [self](const caf::expected<volume_record>&, ending how) {
    auto& st = self->state;
    if (how == ending::failed) {
      // Timed out (it settles again when it returns) or refused: requests that
      // need the host fail as retryable meanwhile.
      st.env.stats->reconcile_actions.add("reconcile_failed");
    } else {
      st.machine.reconciled_with_host();
    }
    end_first_reconcile(self); // a timed-out one counts as finished: it is uncertain now
    finish(self);
  };
  transact_then<volume_record>(self, std::move(t), std::move(settled));
}

} // namespace

void detail::run_reconcile(self_ptr self, std::shared_ptr<const std::set<std::string>> seen) {
  auto& st = self->state;
  auto rec = *st.rec();
  auto stats = st.env.stats;
  if (seen && !needs_host_work(rec, *st.env.storage, *seen)) {
    // Only the record changes: no backend call, no executor.
    auto here = [rec, storage = st.env.storage, seen, stats]() -> caf::expected<volume_record> {
      reconcile_report report;
      auto next = reconcile_volume(rec, *storage, *seen, report);
      count_reconcile_actions(report, stats->reconcile_actions);
      return next;
    };
    reconcile_by(self, on_actor(std::move(here)));
    return;
  }
  auto work = [rec, seen, stats](backend& b) -> caf::expected<volume_record> {
    std::set<std::string> fresh;
    if (!seen) {
      auto points = read_mount_points();
      if (!points) {
        spdlog::error("volume {}: cannot reconcile: {}", rec.name, describe(points.error()));
        stats->reconcile_actions.add("reconcile_failed");
        return rec;
      }
      fresh = std::move(*points);
    }
    reconcile_report report;
    auto next = reconcile_volume(rec, b, seen ? *seen : fresh, report);
    // Counted here, on the worker: what it did happened even if it returns late.
    count_reconcile_actions(report, stats->reconcile_actions);
    return next;
  };
  reconcile_by(self, on_backend(backend_call::reconcile, std::move(work), reconcile_later()));
}

} // namespace berth
