// The transition engine of a volume actor: its queue and guards, the committed
// record, and persistence; its backend calls are in volume_calls.cpp. The
// transitions themselves are descriptions (detail/engine.hpp).

#include "actors/detail/engine.hpp"
#include "actors/detail/transitions.hpp"

#include "actors/volume_rules.hpp"
#include "core/crash_point.hpp"

namespace berth::detail {

void log_failed(const volume_state& st, const std::string& what, const caf::error& err) {
  if (st.machine.refused_beside_hung(err)) {
    spdlog::debug("volume {}: {} refused: {}", st.rec()->name, what, describe(err));
  } else {
    spdlog::error("volume {}: {} failed: {}", st.rec()->name, what, describe(err));
  }
}

// -- the queue --------------------------------------------------------------------

namespace {

void pump(self_ptr self);

/// Why `step` must not start, or none.
caf::error refusal(self_ptr self, const queued_step& step) {
  auto& st = self->state;
  if (auto why = step.from.gone(); !why.empty()) {
    // Only acquiring requests carry a caller: a release still runs when its client
    // left (skipping an Unmount would leak a count nobody sends again).
    spdlog::warn("volume {}: {} not started: its caller went away before its turn ({})",
                 st.rec()->name, step.what, why);
    return make_error(ec::aborted,
                      "volume " + st.rec()->name + ": " + step.what
                        + " not started: the caller went away (" + why + ")");
  }
  return st.machine.refusal(step, st.now());
}

/// `first`, a path change that passed its guards, with the path changes that join its
/// turn and pass theirs (a refused one is answered now): run alone when none does.
void start_path_changes(self_ptr self, queued_step first) {
  auto joining = self->state.machine.take_joining(first.change->target, max_shared_turn - 1);
  std::vector<queued_step> shared;
  for (auto& step : joining) {
    if (auto err = refusal(self, step)) {
      step.refuse(err);
    } else {
      shared.push_back(std::move(step));
    }
  }
  if (shared.empty()) {
    first.run();
    return;
  }
  shared.insert(shared.begin(), std::move(first));
  run_path_changes(self, std::move(shared));
}

/// `first`, a Mount or Unmount that passed its guards, with the ones that join its turn
/// because each only changes counts (one its guards refuse joins, and is answered with
/// that): run alone when it needs the host or none joins.
void start_count_changes(self_ptr self, queued_step first) {
  // Made only when another count change waits: a Mount alone copies no record for it.
  std::optional<count_turn> counts;
  auto joining = self->state.machine.take_while(max_shared_turn - 1, [&](const queued_step& step) {
    if (!step.count) {
      return false;
    }
    if (!counts) {
      counts.emplace(*self->state.rec(), release_clock::now());
      if (!counts->admit(*first.count)) {
        return false; // the first needs the host: it runs alone
      }
    }
    if (auto err = refusal(self, step)) {
      counts->refuse(std::move(err)); // decided once: a caller that leaves later still joined
      return true;
    }
    return counts->admit(*step.count);
  });
  if (joining.empty()) {
    first.run();
    return;
  }
  joining.insert(joining.begin(), std::move(first));
  run_count_changes(self, std::move(joining), *counts);
}

void start(self_ptr self, queued_step step) {
  if (step.who == admits::settle) {
    step.run(); // it decides from the record, present or not
    return;
  }
  if (step.who == admits::internal) {
    if (!self->state.rec().exists()) {
      finish(self); // removed meanwhile: nothing of it is left to reconcile
      return;
    }
  } else if (auto err = refusal(self, step)) {
    step.refuse(err);
    finish(self);
    return;
  }
  if (step.change) {
    start_path_changes(self, std::move(step));
    return;
  }
  if (step.count) {
    start_count_changes(self, std::move(step));
    return;
  }
  step.run();
}

void pump(self_ptr self) {
  auto& st = self->state;
  while (auto step = st.machine.next()) {
    start(self, std::move(*step));
  }
  if (st.machine.idle()) {
    for (auto& rp : st.drain_waiters) {
      rp.deliver(atom::ok_v);
    }
    st.drain_waiters.clear();
  }
}

} // namespace

void enqueue(self_ptr self, queued_step step) {
  self->state.machine.push(std::move(step));
  pump(self);
}

void enqueue_internal(self_ptr self, std::string what, std::function<void()> run, admits who) {
  queued_step step;
  step.what = std::move(what);
  step.who = who;
  step.run = std::move(run);
  enqueue(self, std::move(step));
}

void finish(self_ptr self) {
  if (auto err = self->state.machine.finish()) {
    spdlog::error("{}", describe(err)); // a bug of the engine: the step keeps its turn
    return;
  }
  pump(self);
}

void when_idle(self_ptr self, promise<atom::ok> rp) {
  if (auto& window = self->state.window; window.is_open()) {
    close_window(self, window.number()); // stopping: its callers get their outcome now
  }
  self->state.drain_waiters.push_back(std::move(rp));
  pump(self);
}

void when_settled(self_ptr self, promise<atom::ok> rp) {
  if (self->state.machine.certain()) {
    when_idle(self, std::move(rp));
    return;
  }
  self->state.settle_waiters.push_back(std::move(rp));
}

void retire(self_ptr self) {
  auto& st = self->state;
  // The actor ends: what it counted as pending or uncertain leaves the gauges with it.
  end_first_reconcile(self);
  if (!st.machine.certain()) {
    st.env.stats->volumes.uncertain.add(-1);
  }
  st.env.stats->health.forget(st.rec()->name); // its hung call, its failed modifications
  for (auto& step : st.machine.take_waiting()) {
    if (step.refuse) {
      step.refuse(no_such_volume(st.rec()->name));
    }
  }
  for (auto& rp : st.window.take_waiters()) {
    rp.deliver(no_such_volume(st.rec()->name));
  }
  self->quit();
}

void end_first_reconcile(self_ptr self) {
  if (self->state.machine.first_reconcile_over()) {
    self->state.env.stats->volumes.reconcile_pending.add(-1);
  }
}

// -- persistence ------------------------------------------------------------------

// The two crash points of every saving transition: a kill here leaves the host
// changed and the record not (yet) saved, or saved but never answered; the next
// start must make both whole (docs/design.md, "All or nothing, across crashes").

void persist(self_ptr self, shared_record next, const done_fn& then) {
  test_crash_point("engine-before-persist");
  self->request(self->state.env.persistence, caf::infinite, atom::put_v, std::move(next))
    .then(
      [then](atom::ok) {
        test_crash_point("engine-before-reply");
        then({});
      },
      [then](caf::error& err) { then(err); });
}

void persist_erase(self_ptr self, const std::string& name, const done_fn& then) {
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

work_of<none> host_unmount(const volume_record& rec) {
  auto w = on_backend(
    backend_call::unmount, [rec](backend& b) { return b.unmount(rec, false); }, reconcile_later());
  auto lazy =
    on_backend(backend_call::lazy_unmount, [rec](backend& b) { return b.unmount(rec, true); });
  w.plan.call->after_timeout = std::make_shared<const backend_work>(std::move(*lazy.plan.call));
  return w;
}

late_settle reconcile_later() {
  return while_present([](const volume_record&) {
    settlement s;
    s.reconcile = true;
    return s;
  });
}

settlement undo_late(const std::string& what, work_plan undo) {
  transition<none> t;
  t.what = "undoing " + what;
  t.work.plan = std::move(undo);
  t.change = record_change::none; // the record never had it
  t.failed = "undoing " + what + " failed";
  settlement s;
  s.run = plan_of<none>(std::move(t));
  return s;
}

void settle_in_turn(self_ptr self, const late_settle& settle) {
  auto s = settle(self->state.rec());
  if (!s.run) {
    if (s.reconcile) {
      run_reconcile(self, nullptr); // it ends the step
    } else {
      finish(self); // the record agrees already
    }
    return;
  }
  if (s.reconcile) {
    enqueue_internal(self, "reconcile", [self] { run_reconcile(self, nullptr); });
  }
  // Nobody waits: the transition's lines say what happened.
  s.run->transition.end = [self](const caf::error&, ending) { finish(self); };
  begin_transition(self, std::move(*s.run));
}

} // namespace berth::detail
