// The backend calls of a volume actor: the driver of its call_slot (actors/machine/).
// A call runs on the executor and reports back with atom::done; the one timer
// (atom::deadline) times it out; a call that returns after that is settled in turn.
// One call at a time, never a second beside a hung one (docs/design.md, "A hung call
// blocks only its own volume").

#include "actors/detail/engine.hpp"

#include <caf/actor_cast.hpp>
#include <caf/send.hpp>

namespace berth::detail {

namespace {

/// Counts a call that returned after `began` into its (backend, call) histogram.
void observe_call(volume_state& st, backend_call call,
                  std::chrono::steady_clock::time_point began) {
  std::chrono::duration<double> took = st.now() - began;
  st.env.stats->backends.call_duration.at(st.env.storage->name(), label_of(call))
    .observe(took.count());
}

/// Sends the volume its atom::deadline at `at` (and a millisecond, so that it is due).
void arm_deadline(self_ptr self, std::chrono::steady_clock::time_point at) {
  auto after = std::chrono::ceil<std::chrono::milliseconds>(at - self->state.now());
  self->delayed_send(caf::actor_cast<volume_actor>(self), after + std::chrono::milliseconds{1},
                     atom::deadline_v);
}

/// The one place a backend call starts.
void submit_call(self_ptr self, backend_call call, std::function<caf::error(backend&)> work,
                 done_fn then, late_settle late, bool despite_hung) {
  auto& st = self->state;
  std::string what{words_of(call)};
  // One backend call per volume, ever: a retry never starts a second one.
  if (auto err = st.machine.may_begin_call(what, despite_hung, st.now())) {
    then(std::move(err));
    return;
  }
  auto token = st.machine.reserve_call();
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
    then(make_error(ec::unavailable,
                    "backend executor is full or stopped; " + what + " of volume " + st.rec()->name
                      + " not started"));
    return;
  }
  call_slot::submitted submitted{call, now_rfc3339(), std::move(ticket), std::move(then),
                                 std::move(late)};
  auto armed = st.machine.begin_call(token, std::move(submitted), st.now());
  if (armed) {
    arm_deadline(self, *armed);
  }
}

} // namespace

namespace {

/// Runs the backend call `c` (beside a hung one only when `beside_hung`); `then` gets
/// its outcome as `c` says to read it.
void run_call(self_ptr self, const backend_work& c, const done_fn& then, bool beside_hung) {
  auto outcome = [self, unsupported_is_done = c.unsupported_is_done, kind = c.kind,
                  after = c.after_timeout, then](caf::error err) {
    if (err && unsupported_is_done && is(err, ec::unsupported)) {
      err = {};
    }
    if (after && is(err, ec::timeout)) {
      spdlog::warn("volume {}: {} timed out; a {} instead", self->state.rec()->name, words_of(kind),
                   words_of(after->kind));
      run_call(self, *after, then, true);
      return;
    }
    then(std::move(err));
  };
  submit_call(self, c.kind, c.run, std::move(outcome), c.settle, beside_hung);
}

} // namespace

void run_work(self_ptr self, const work_plan& work, const done_fn& then) {
  if (work.call) {
    run_call(self, *work.call, then, false);
  } else if (work.here) {
    then(work.here());
  } else {
    then({});
  }
}

namespace {

/// The hung call `late` returned with `err`.
void on_late_return(self_ptr self, call_slot::returned_late late, const caf::error& err) {
  auto& st = self->state;
  // Counted when it returns, late: the histogram's tail shows how long hung calls
  // really took (one that never returns shows only in backends.timeouts).
  observe_call(st, late.call.kind, late.call.began);
  if (late.certain_again) {
    st.env.stats->volumes.uncertain.add(-1);
    st.env.stats->health.clear_hung(st.rec()->name);
  }
  spdlog::warn("volume {}: {} (started {}) returned after its timeout ({}){}", st.rec()->name,
               words_of(late.call.kind), late.call.started, err ? describe(err) : "succeeded",
               late.certain_again ? "; the volume is certain again" : "");
  if (!err && late.call.settle) {
    // Its caller was told it failed: settle it in turn, so no retry races it.
    enqueue_internal(
      self, "settle a late " + std::string{words_of(late.call.kind)},
      [self, settle = std::move(late.call.settle)] { settle_in_turn(self, settle); },
      admits::settle);
  }
  if (late.certain_again) {
    auto waiters = std::exchange(st.settle_waiters, {});
    for (auto& rp : waiters) {
      when_idle(self, std::move(rp)); // after the settling step just queued
    }
  }
}

/// The current call `e` passed its deadline: it times out, hung if it had started.
void on_expired(self_ptr self, call_slot::expired e) {
  auto& st = self->state;
  auto limit = std::to_string(st.env.backend_timeout.count()) + " ms";
  // Both kinds count as timeouts: the caller got ec::timeout either way.
  st.env.stats->backends.timeouts.add(st.env.storage->name());
  auto then = std::move(e.call.then);
  std::string what{words_of(e.call.kind)};
  if (st.env.exec->abandon(e.call.ticket) == task_runner::abandoned::dropped) {
    // It never started (every worker was busy): nothing happened, nothing is uncertain.
    then(make_error(ec::timeout,
                    what + " of volume " + st.rec()->name + " did not start within " + limit
                      + " (the backend executor is busy); retry"));
    return;
  }
  spdlog::warn("volume {}: {} did not return within {}; the volume is uncertain until "
               "it does, and starts no other backend call",
               st.rec()->name, what, limit);
  e.call.ticket = nullptr;
  if (st.machine.hang(std::move(e), st.now())) {
    st.env.stats->volumes.uncertain.add(1);
    st.env.stats->health.set_hung(
      st.rec()->name,
      what + " did not return within " + limit
        + ": the volume starts no other backend call until it does; see what "
          "holds the backend (a stuck device or mount) in berthd's log");
  }
  then(make_error(ec::timeout,
                  what + " of volume " + st.rec()->name + " did not finish within " + limit));
}

} // namespace

void on_call_done(self_ptr self, uint64_t token, caf::error err) {
  auto report = self->state.machine.call_done(token);
  if (auto* f = std::get_if<call_slot::finished>(&report)) {
    observe_call(self->state, f->kind, f->began);
    f->then(std::move(err));
  } else if (auto* late = std::get_if<call_slot::returned_late>(&report)) {
    on_late_return(self, std::move(*late), err);
  }
}

void on_call_deadline(self_ptr self) {
  auto fired = self->state.machine.timer_fired(self->state.now());
  if (auto* e = std::get_if<call_slot::expired>(&fired)) {
    on_expired(self, std::move(*e));
  } else if (auto at = std::get<call_slot::not_due>(fired).arm_at) {
    arm_deadline(self, *at);
  }
}

} // namespace berth::detail
