// The coalescing mailbox of one volume (docs/design.md, "Expand and modify coalesce
// into one call"): ControllerExpandVolume, ControllerModifyVolume and berthctl
// resize/modify for the same volume that arrive within one window become one
// backend modify call.
//
//   request ─▶ checks (same actor step: nothing races in) ─▶ satisfied? reply at once
//        │ refused: reply at once, the window is untouched   │ no
//        ▼                                                   ▼
//   conflict with the window? refuse this one     merge into the window (open it)
//                                                            │ window closes
//                                                            ▼
//   queue ─▶ one transact: backend modify ─▶ persist ─▶ every merged caller gets the outcome
//
// The window is not in the queue: mounts, stages and publishes run while it is
// open; only its backend call takes a turn like theirs. Requests that arrive
// while that call runs open the next window.

#include <caf/actor_cast.hpp>
#include <spdlog/spdlog.h>

#include "actors/detail/transitions.hpp"
#include "actors/modify_rules.hpp"
#include "actors/volume_rules.hpp"

namespace berth::detail {

namespace {

void count(self_ptr self, const char* result, uint64_t n = 1) {
  self->state.env.stats->modify_requests.add(result, n);
}

/// Why the volume cannot take a modification now, before its content is looked at.
caf::error refusal(const volume_state& st, const modify_request& req) {
  if (auto err = st.machine.state_refusal(req.owner, false, "modification", st.now())) {
    return err;
  }
  if (st.rec()->kind != record_kind::volume) {
    return no_such_volume(st.rec()->name, "it is a snapshot");
  }
  return {};
}

/// The request as a modification: its size rounded as the backend provisions it.
caf::expected<modification> asked_of(const volume_state& st, const modify_request& req) {
  modification asked;
  asked.parameters = req.parameters;
  if (req.required_bytes != 0) {
    auto rounded = st.env.storage->resize_capacity(*st.rec(), req.required_bytes);
    if (!rounded) {
      return rounded.error();
    }
    asked.bytes = *rounded;
  }
  return asked;
}

/// A modification that returns after its timeout happened: its callers were told
/// it failed, but the backend has it, so the record adopts it.
late_settle adopt_late(const modification& m) {
  return while_present([m](const volume_record& now) {
    auto left = outstanding(now, m);
    if (is_empty(left)) {
      return settlement{};
    }
    // A transition of the record only, in turn: the backend already has it.
    transition<none> t;
    t.what = "a late modification (" + describe(left) + ")";
    t.apply = [left](const volume_record& before, none) {
      return apply_modification(before, left);
    };
    t.committed = [left](const volume_record& next, none) {
      return "volume " + next.name + ": adopted a modification that returned after its "
             "timeout (" + describe(left) + ")";
    };
    settlement s;
    s.run = plan_of<none>(std::move(t));
    return s;
  });
}

/// The step of a closed window: one backend call for everything merged in it.
void apply_window(self_ptr self, volume_state::modify_batch batch) {
  auto& st = self->state;
  auto waiters = std::make_shared<std::vector<promise<volume_record>>>(std::move(batch.waiters));
  auto answer_all = [self, waiters](const caf::expected<volume_record>& out) {
    count(self, out ? modify_result::applied : modify_result::failed, waiters->size());
    // A failure of the backend, not a refusal (a cooldown, a size it cannot give), is what
    // a modification that keeps failing is made of.
    auto& health = self->state.env.stats->health;
    if (out) {
      health.modify_applied(out->name);
    } else if (is(out.error(), ec::backend_failure) || is(out.error(), ec::timeout)
               || is(out.error(), ec::internal)) {
      health.modify_failed(self->state.rec()->name, describe(out.error()));
    }
    for (auto& rp : *waiters) {
      deliver(rp, out);
    }
  };
  // An earlier window's call may have done part of it meanwhile.
  auto m = outstanding(*st.rec(), batch.change);
  if (is_empty(m)) {
    answer_all(*st.rec());
    finish(self);
    return;
  }
  auto rec = *st.rec();
  auto storage = st.env.storage->name();
  auto callers = waiters->size();
  transition<none> t;
  t.what = "modification (" + describe(m) + ")";
  t.work = on_backend(
    backend_call::modify, [rec, m](backend& b) { return b.modify(rec, m); }, adopt_late(m));
  t.apply = [m](const volume_record& before, none) { return apply_modification(before, m); };
  // No undo: a grown image cannot shrink back. A failed persist leaves the volume
  // ahead of its record; the caller's retry (idempotent in the backend) settles it.
  t.committed = [m, callers](const volume_record& next, none) {
    return "volume " + next.name + " modified: " + describe(m) + " (modification "
           + std::to_string(next.modifications) + ", " + std::to_string(callers)
           + " request(s) in one call)";
  };
  st.env.stats->modify_backend_calls.add(storage); // as its call starts, refused or not
  transact<none>(self, std::move(t), [self, answer_all](caf::expected<none> out) {
    if (!out) {
      answer_all(out.error());
    } else {
      answer_all(*self->state.rec());
    }
  });
}

void schedule_close(self_ptr self, uint64_t number) {
  auto& env = self->state.env;
  auto hdl = caf::actor_cast<volume_actor>(self);
  if (env.timer) {
    env.timer(hdl, number, env.coalesce_window);
  } else {
    self->delayed_send(hdl, env.coalesce_window, atom::close_window_v, number);
  }
}

} // namespace

void receive_modify(self_ptr self, promise<volume_record> rp, modify_request req) {
  auto& st = self->state;
  count(self, modify_result::received);
  auto refuse = [&](const char* why, const caf::error& err) {
    count(self, why);
    spdlog::info("volume {}: modification ({}{}) refused: {}", st.rec()->name,
                 req.required_bytes != 0 ? "size " + std::to_string(req.required_bytes) : "",
                 req.parameters.empty() ? "" : " parameters", describe(err));
    rp.deliver(err);
  };
  if (auto err = refusal(st, req)) {
    refuse(modify_result::refused_state, err);
    return;
  }
  auto asked = asked_of(st, req);
  if (!asked) {
    refuse(modify_result::refused_invalid, asked.error());
    return;
  }
  if (auto err = check_shrink(*st.rec(), asked->bytes)) {
    refuse(modify_result::refused_shrink, err);
    return;
  }
  if (auto err = st.env.storage->validate_mutable(st.rec()->name, asked->parameters)) {
    refuse(modify_result::refused_invalid, err);
    return;
  }
  auto wanted = outstanding(*st.rec(), *asked);
  auto& window = st.window;
  if (window.is_open()) {
    if (auto err = check_conflict(st.rec()->name, window.change(), wanted, *asked)) {
      refuse(modify_result::refused_conflict, err);
      return;
    }
  }
  if (is_empty(wanted)) {
    // Already so: no window, no backend call.
    count(self, modify_result::satisfied);
    rp.deliver(*st.rec());
    return;
  }
  if (!st.machine.certain()) {
    refuse(modify_result::refused_state, st.machine.still_hung("modification", st.now()));
    return;
  }
  auto opened = window.merge(wanted, rp);
  if (opened == 0) {
    count(self, modify_result::merged);
    return;
  }
  if (st.env.coalesce_window.count() <= 0) {
    close_window(self, opened); // coalescing off: one call per request
  } else {
    spdlog::debug("volume {}: modification window {} open for {} ms", st.rec()->name, opened,
                  st.env.coalesce_window.count());
    schedule_close(self, opened);
  }
}

void close_window(self_ptr self, uint64_t number) {
  auto closed = self->state.window.close(number);
  if (!closed) {
    return; // closed early (at a drain) or already closed
  }
  auto batch = std::move(*closed);
  auto waiters = std::make_shared<std::vector<promise<volume_record>>>(batch.waiters);
  queued_step step;
  step.what = "modification (" + describe(batch.change) + ")";
  step.who = admits::existing;
  step.refuse = [self, waiters](const caf::error& err) {
    count(self, modify_result::failed, waiters->size());
    for (auto& rp : *waiters) {
      rp.deliver(err);
    }
  };
  step.run = [self, batch = std::move(batch)]() mutable { apply_window(self, std::move(batch)); };
  enqueue(self, std::move(step));
}

} // namespace berth::detail
