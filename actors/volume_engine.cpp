// The transition engine of a volume actor: its queue and guards, its backend
// calls (one at a time, with a timeout, never a second beside a hung one), and
// persistence. The transitions themselves are descriptions (detail/engine.hpp).
// Over 400 lines because the queue, the one deadline timer and the persist step all
// move the same per-volume state, and read best as one state machine.

#include "actors/detail/engine.hpp"
#include "actors/detail/transitions.hpp"

#include <caf/actor_cast.hpp>
#include <caf/send.hpp>

#include "actors/volume_rules.hpp"
#include "core/crash_point.hpp"

namespace berth::detail {

caf::error still_hung(const volume_state& st, const std::string& what) {
  const auto& h = st.hung.begin()->second;
  auto secs = std::chrono::duration_cast<std::chrono::seconds>(std::chrono::steady_clock::now()
                                                               - h.since);
  return make_error(ec::aborted, "volume " + st.rec.name + ": its " + h.what + " started at "
                                   + h.started + " has not returned (hung for "
                                   + std::to_string(secs.count()) + " s); " + what
                                   + " not started, retry later");
}

// -- the queue --------------------------------------------------------------------

caf::error state_refusal(const volume_state& st, record_owner owner, bool creates,
                         const std::string& what) {
  if (!creates && !st.exists) {
    return no_such_volume(st.rec.name);
  }
  if (st.exists && owner != record_owner::unset) {
    // Docker and CSI are separate namespaces: neither acts on the other's records.
    if (auto err = check_owner(st.rec, owner, creates)) {
      return err;
    }
  }
  if (!st.reconciled) {
    // Its record may not match the host: nothing is served from it, not even a count.
    return !st.hung.empty() ? still_hung(st, what)
                            : make_error(ec::aborted, "volume " + st.rec.name
                                                        + " is not reconciled with the host "
                                                          "yet; retry later");
  }
  return {};
}

namespace {

void pump(self_ptr self);

/// Why `step` must not start, or none.
caf::error refusal(self_ptr self, const queued_step& step) {
  auto& st = self->state;
  if (auto why = step.from.gone(); !why.empty()) {
    // Only acquiring requests carry a caller: a release still runs when its client
    // left (skipping an Unmount would leak a count nobody sends again).
    spdlog::warn("volume {}: {} not started: its caller went away before its turn ({})",
                 st.rec.name, step.what, why);
    return make_error(ec::aborted, "volume " + st.rec.name + ": " + step.what
                                     + " not started: the caller went away (" + why + ")");
  }
  bool creates = step.who == admits::creation;
  if (auto err = state_refusal(st, step.owner, creates, step.what)) {
    return err;
  }
  if (creates && !st.hung.empty()) {
    // A hung call (a Remove, say) may still change what exists: "already exists"
    // now could be a lie a moment later.
    return still_hung(st, step.what);
  }
  return {};
}

void start(self_ptr self, queued_step step) {
  if (step.who == admits::internal) {
    if (!self->state.exists) {
      finish(self); // removed meanwhile: nothing of it is left to settle
      return;
    }
  } else if (auto err = refusal(self, step)) {
    step.refuse(err);
    finish(self);
    return;
  }
  step.run();
}

void pump(self_ptr self) {
  auto& st = self->state;
  while (!st.busy && !st.queue.empty()) {
    auto step = std::move(st.queue.front());
    st.queue.pop_front();
    st.busy = true;
    start(self, std::move(step));
  }
  if (!st.busy && st.queue.empty()) {
    for (auto& rp : st.drain_waiters) {
      rp.deliver(atom::ok_v);
    }
    st.drain_waiters.clear();
  }
}

} // namespace

void enqueue(self_ptr self, queued_step step) {
  self->state.queue.push_back(std::move(step));
  pump(self);
}

void enqueue_internal(self_ptr self, std::string what, std::function<void()> run) {
  queued_step step;
  step.what = std::move(what);
  step.who = admits::internal;
  step.run = std::move(run);
  enqueue(self, std::move(step));
}

void finish(self_ptr self) {
  self->state.busy = false;
  pump(self);
}

void when_idle(self_ptr self, promise<atom::ok> rp) {
  if (auto open = self->state.window.number; open != 0) {
    close_window(self, open); // stopping: its callers get their outcome now
  }
  self->state.drain_waiters.push_back(std::move(rp));
  pump(self);
}

void when_settled(self_ptr self, promise<atom::ok> rp) {
  if (self->state.hung.empty()) {
    when_idle(self, std::move(rp));
    return;
  }
  self->state.settle_waiters.push_back(std::move(rp));
}

void retire(self_ptr self) {
  auto& st = self->state;
  // The actor ends: what it counted as pending or uncertain leaves the gauges with it.
  end_first_reconcile(self);
  if (!st.hung.empty()) {
    st.env.stats->volumes.uncertain.add(-1);
  }
  for (auto& step : st.queue) {
    if (step.refuse) {
      step.refuse(no_such_volume(st.rec.name));
    }
  }
  st.queue.clear();
  for (auto& rp : st.window.waiters) {
    rp.deliver(no_such_volume(st.rec.name));
  }
  st.window = modify_window{};
  self->quit();
}

// -- the committed record -----------------------------------------------------------

void commit_record(self_ptr self, volume_record next, bool creates) {
  auto& st = self->state;
  bool existed = st.exists;
  st.exists = existed || creates;
  st.env.stats->volumes.replace(existed ? &st.rec : nullptr, st.exists ? &next : nullptr);
  st.rec = std::move(next);
}

void forget_record(self_ptr self) {
  auto& st = self->state;
  if (st.exists) {
    st.env.stats->volumes.replace(&st.rec, nullptr);
  }
  auto name = std::move(st.rec.name);
  st.exists = false;
  st.rec = volume_record{};
  st.rec.name = std::move(name);
}

void end_first_reconcile(self_ptr self) {
  auto& st = self->state;
  if (st.first_reconcile_pending) {
    st.first_reconcile_pending = false;
    st.env.stats->volumes.reconcile_pending.add(-1);
  }
}

// -- backend calls ----------------------------------------------------------------

namespace {

/// The label of a call (`what`, as call_backend got it) in backend_call_names().
std::string_view call_label(const std::string& what) {
  if (what == "lazy unmount") {
    return "lazy_unmount";
  }
  if (what == "grow") {
    return "node_expand"; // NodeExpandVolume's filesystem grow
  }
  return what;
}

/// Counts a call that returned after `began` into its (backend, call) histogram.
void observe_call(volume_state& st, const std::string& what,
                  std::chrono::steady_clock::time_point began) {
  std::chrono::duration<double> took = std::chrono::steady_clock::now() - began;
  st.env.stats->backends.call_duration.at(st.env.storage->name(), call_label(what))
    .observe(took.count());
}

/// Sends the volume its one atom::deadline after `after`, unless one is on its way.
void arm_deadline(self_ptr self, std::chrono::steady_clock::duration after) {
  auto& st = self->state;
  if (st.deadline_armed) {
    return; // it arrives no later than the current call's deadline, and re-arms then
  }
  st.deadline_armed = true;
  self->delayed_send(caf::actor_cast<volume_actor>(self),
                     std::chrono::duration_cast<std::chrono::milliseconds>(after)
                       + std::chrono::milliseconds{1},
                     atom::deadline_v);
}

/// The one place a backend call starts.
void submit_call(self_ptr self, std::string what, std::function<caf::error(backend&)> work,
                 done_fn then, late_undo late, bool despite_hung) {
  auto& st = self->state;
  if (!st.hung.empty() && !despite_hung) {
    // One backend call per volume, ever: a retry never starts a second one.
    then(still_hung(st, what));
    return;
  }
  auto token = st.next_token++;
  auto hdl = caf::actor_cast<volume_actor>(self);
  auto storage = st.env.storage;
  auto ticket = st.env.exec->submit([hdl, token, storage, work = std::move(work), what] {
    caf::error err;
    try {
      err = work(*storage);
    } catch (const std::exception& e) {
      err = make_error(ec::internal, what + " failed: " + e.what());
    } catch (...) {
      // Always answer: a call that never reports back would leave the volume hung.
      err = make_error(ec::internal, what + " failed with a non-standard exception");
    }
    caf::anon_send(hdl, atom::done_v, token, std::move(err));
  });
  if (!ticket) {
    then(make_error(ec::unavailable, "backend executor is full or stopped; " + what
                                       + " of volume " + st.rec.name + " not started"));
    return;
  }
  st.current_token = token;
  st.current_call = what;
  st.current_started = now_rfc3339();
  st.current_began = std::chrono::steady_clock::now();
  st.current_deadline = st.current_began + st.env.backend_timeout;
  st.current_ticket = std::move(ticket);
  st.continuation = std::move(then);
  st.current_undo = std::move(late);
  arm_deadline(self, st.env.backend_timeout);
}

} // namespace

void call_backend(self_ptr self, std::string what, std::function<caf::error(backend&)> work,
                  done_fn then, late_undo late) {
  submit_call(self, std::move(what), std::move(work), std::move(then), std::move(late), false);
}

void call_backend_despite_hung(self_ptr self, std::string what,
                               std::function<caf::error(backend&)> work, done_fn then) {
  submit_call(self, std::move(what), std::move(work), std::move(then), {}, true);
}

void on_call_done(self_ptr self, uint64_t token, caf::error err) {
  auto& st = self->state;
  if (token == st.current_token) {
    observe_call(st, st.current_call, st.current_began);
    st.current_token = 0;
    st.current_ticket = nullptr;
    auto k = std::move(st.continuation);
    k(std::move(err));
    return;
  }
  auto it = st.hung.find(token);
  if (it == st.hung.end()) {
    return;
  }
  auto call = std::move(it->second);
  st.hung.erase(it);
  // Counted when it returns, late: the histogram's tail shows how long hung calls
  // really took (one that never returns shows only in backends.timeouts).
  observe_call(st, call.what, call.began);
  if (st.hung.empty()) {
    st.env.stats->volumes.uncertain.add(-1);
  }
  spdlog::warn("volume {}: {} (started {}) returned after its timeout ({}){}", st.rec.name,
               call.what, call.started, err ? describe(err) : "succeeded",
               st.hung.empty() ? "; the volume is certain again" : "");
  if (!err && call.settle) {
    // Its caller was told it failed: settle it in turn, so no retry races it.
    enqueue_internal(self, "settle a late " + call.what, std::move(call.settle));
  }
  if (st.hung.empty()) {
    auto waiters = std::move(st.settle_waiters);
    st.settle_waiters.clear();
    for (auto& rp : waiters) {
      when_idle(self, std::move(rp)); // after the settling step just queued
    }
  }
}

void on_call_deadline(self_ptr self) {
  auto& st = self->state;
  st.deadline_armed = false;
  if (st.current_token == 0) {
    return; // the call it was armed for returned, and none runs now
  }
  if (auto now = std::chrono::steady_clock::now(); now < st.current_deadline) {
    arm_deadline(self, st.current_deadline - now); // armed for an earlier call
    return;
  }
  auto token = st.current_token;
  st.current_token = 0;
  auto limit = std::to_string(st.env.backend_timeout.count()) + " ms";
  caf::error timed_out;
  // Both kinds count as timeouts: the caller got ec::timeout either way.
  st.env.stats->backends.timeouts.add(st.env.storage->name());
  if (st.env.exec->abandon(st.current_ticket) == executor::abandoned::dropped) {
    // It never started (every worker was busy): nothing happened, nothing is uncertain.
    timed_out = make_error(ec::timeout, st.current_call + " of volume " + st.rec.name
                                          + " did not start within " + limit
                                          + " (the backend executor is busy); retry");
  } else {
    spdlog::warn("volume {}: {} did not return within {}; the volume is uncertain until "
                 "it does, and starts no other backend call",
                 st.rec.name, st.current_call, limit);
    if (st.hung.empty()) {
      st.env.stats->volumes.uncertain.add(1);
    }
    st.hung.emplace(token, hung_call{st.current_call, st.current_started,
                                     std::chrono::steady_clock::now(), st.current_began,
                                     std::move(st.current_undo)});
    timed_out = make_error(ec::timeout, st.current_call + " of volume " + st.rec.name
                                          + " did not finish within " + limit);
  }
  st.current_ticket = nullptr;
  st.current_undo = nullptr;
  auto k = std::move(st.continuation);
  k(std::move(timed_out));
}

// -- persistence ------------------------------------------------------------------

// The two crash points of every saving transition: a kill here leaves the host
// changed and the record not (yet) saved, or saved but never answered; the next
// start must make both whole (docs/design.md, "All or nothing, across crashes").

void persist(self_ptr self, const volume_record& next, done_fn then) {
  test_crash_point("engine-before-persist");
  self->request(self->state.env.persistence, caf::infinite, atom::put_v, next)
    .then(
      [then](atom::ok) {
        test_crash_point("engine-before-reply");
        then({});
      },
      [then](caf::error& err) { then(err); });
}

void persist_erase(self_ptr self, const std::string& name, done_fn then) {
  test_crash_point("engine-before-persist");
  self->request(self->state.env.persistence, caf::infinite, atom::erase_v, name)
    .then(
      [then](atom::ok) {
        test_crash_point("engine-before-reply");
        then({});
      },
      [then](caf::error& err) { then(err); });
}

// -- pieces shared by several transitions -------------------------------------------

void unmount_host(self_ptr self, const volume_record& rec, done_fn then) {
  call_backend(self, "unmount", [rec](backend& b) { return b.unmount(rec, false); },
               [self, rec, then](caf::error err) {
                 if (is(err, ec::timeout)) {
                   spdlog::warn("volume {}: unmount timed out, detaching lazily", rec.name);
                   call_backend_despite_hung(
                     self, "lazy unmount", [rec](backend& b) { return b.unmount(rec, true); },
                     then);
                   return;
                 }
                 then(err);
               },
               reconcile_later(self));
}

step_fn<none> host_unmount(self_ptr self, volume_record rec) {
  return [self, rec](std::function<void(caf::expected<none>)> then) {
    unmount_host(self, rec, [then](caf::error err) {
      if (err) {
        then(std::move(err));
      } else {
        then(none{});
      }
    });
  };
}

void settle_late(self_ptr self, std::string what, step_fn<none> undo) {
  transition<none> t;
  t.what = "undoing " + what;
  t.work = std::move(undo);
  t.change = record_change::none; // the record never had it
  t.failed = "undoing " + what + " failed";
  transact<none>(self, std::move(t), nobody_waits);
}

} // namespace berth::detail
