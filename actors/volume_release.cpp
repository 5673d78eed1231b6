// The release of one Docker mount ID whose Unmount dockerd will never send
// (docs/design.md, "Mount IDs dockerd forgot"): its whole count is dropped. Decided
// by actors/release_rules (the dockerd reconciliation) or asked by an operator, and
// decided again here, at its turn, on the committed record:
//
//   not counted ──▶ 0 (automatic) / ec::not_found (operator)
//   if_unchanged and origins[id] != seen ──▶ 0: a Mount came since the decision
//   other IDs remain ──▶ record-only commit (runs while a call is hung, like Unmount)
//   the last ID ──▶ unmount_last: the host unmount of the last Unmount
//
// Logged with mount_release::log and counted in telemetry::mount_ids_released once
// committed.

#include <spdlog/spdlog.h>

#include "actors/detail/transitions.hpp"
#include "actors/volume_rules.hpp"
#include "core/text.hpp"

namespace berth::detail {

namespace {

/// The origin the committed record holds for `id` ({} when none).
mount_id_origin committed_origin(const volume_record& rec, const std::string& id) {
  auto it = rec.origins.find(id);
  return it == rec.origins.end() ? mount_id_origin{} : it->second;
}

} // namespace

void run_release(self_ptr self, promise<uint32_t> rp, mount_release r) {
  auto& st = self->state;
  auto counted = st.rec()->mounts.find(r.id);
  if (counted == st.rec()->mounts.end()) {
    if (r.if_unchanged) {
      // Unmounted (or released) since the decision: nothing is left to drop.
      spdlog::info("volume {}: release of mount ID {} skipped: it is no longer counted",
                   st.rec()->name, short_id(r.id));
      answer(self, rp, uint32_t{0});
      return;
    }
    answer(self, rp,
           make_error(ec::not_found,
                      "volume " + st.rec()->name + " counts no mount ID " + r.id
                        + " (berthctl inspect " + st.rec()->name + " lists its IDs)"));
    return;
  }
  if (r.if_unchanged && committed_origin(*st.rec(), r.id) != r.seen) {
    spdlog::info("volume {}: release of mount ID {} skipped: it was mounted again since",
                 st.rec()->name, short_id(r.id));
    answer(self, rp, uint32_t{0});
    return;
  }
  auto next = *st.rec();
  auto dropped = drop_mount_id(next, r.id);
  auto counted_release = [stats = st.env.stats, reason = r.reason] {
    stats->mount_ids_released.add(to_string(reason));
  };
  if (total_mounts(next) > 0 || !next.mounted) {
    // Other IDs hold the mount (or nothing is mounted): only the record changes.
    commit(self, rp, std::move(next), dropped, r.log, counted_release);
    return;
  }
  auto id = r.id;
  auto t = unmount_last(
    self, [id](volume_record& rec) { drop_mount_id(rec, id); },
    [log = r.log](const volume_record&) { return log; });
  transact<none>(self, std::move(t),
                 [self, rp, dropped, counted_release](caf::expected<none> out) mutable {
                   if (!out) {
                     rp.deliver(out.error());
                     return;
                   }
                   counted_release();
                   spdlog::info("volume {} unmounted: its last mount ID was released",
                                self->state.rec()->name);
                   rp.deliver(dropped);
                 });
}

} // namespace berth::detail
