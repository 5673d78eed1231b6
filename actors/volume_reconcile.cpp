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

#include <spdlog/spdlog.h>

#include "actors/detail/engine.hpp"
#include "backends/mountinfo.hpp"
#include "core/errors.hpp"
#include "persistence/recovery/reconcile.hpp"

namespace berth {

using namespace detail;

namespace {

/// Commits a reconciled record; the volume serves from then on.
void commit_reconciled(self_ptr self, volume_record next) {
  auto& st = self->state;
  auto done = [self](caf::error err) {
    auto& st = self->state;
    if (err) {
      spdlog::error("volume {}: reconciled record not saved: {}", st.rec.name, describe(err));
    }
    st.reconciled = true;
    end_first_reconcile(self);
    finish(self);
  };
  if (next == st.rec) {
    done({});
    return;
  }
  persist(self, next, [self, next, done](caf::error err) mutable {
    if (!err) {
      commit_record(self, std::move(next));
    }
    done(err);
  });
}

} // namespace

void detail::run_reconcile(self_ptr self, std::shared_ptr<const std::set<std::string>> seen) {
  auto& st = self->state;
  auto rec = st.rec;
  auto stats = st.env.stats;
  if (seen && !needs_host_work(rec, *st.env.storage, *seen)) {
    reconcile_report report; // only the record changes: no backend call, no executor
    auto next = reconcile_volume(rec, *st.env.storage, *seen, report);
    count_reconcile_actions(report, stats->reconcile_actions);
    commit_reconciled(self, std::move(next));
    return;
  }
  call_backend<volume_record>(
    self, "reconcile",
    [rec, seen, stats](backend& b) -> caf::expected<volume_record> {
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
    },
    [self](caf::expected<volume_record> out) {
      if (!out) {
        // Timed out (it settles again when it returns) or refused: requests that
        // need the host fail as retryable meanwhile.
        spdlog::error("volume {}: reconciliation did not finish: {}", self->state.rec.name,
                      describe(out.error()));
        self->state.env.stats->reconcile_actions.add("reconcile_failed");
        end_first_reconcile(self); // a timed-out one counts as finished: it is uncertain now
        finish(self);
        return;
      }
      commit_reconciled(self, std::move(*out));
    },
    reconcile_later(self));
}

late_undo detail::reconcile_later(self_ptr self) {
  return [self] { run_reconcile(self, nullptr); };
}

} // namespace berth
