#pragma once

// The transition engine of a volume actor (actors/volume_engine.cpp). Every
// transition, Docker's (volume_docker.cpp), CSI's (volume_csi.cpp), a release
// (volume_release.cpp), the reconciliation (volume_reconcile.cpp), the coalesced
// modify (volume_mailbox.cpp) and the settle of a call that returned late, is a
// description (transition<T>) that transact runs inside a queued step:
//
//   enqueue ─▶ guards (caller, exists, owner, reconciled) ─▶ step
//   step: check ─▶ transact: work (executor, timeout) ─▶ apply ─▶ persist ─▶ commit, log ─▶ reply
//                                 │ fails: reply                    │ fails: undo, reply
//
// The work is a backend call, work on the actor thread, or nothing (a change of
// the record only), described as data (machine/transition_work.hpp); the record is
// then saved, erased, or left alone by work that only reads (record_change), as the
// plain machine record_transaction answers. The volume's state is one plain machine
// (machine/volume_machine.hpp): its record, its turns, the one running transition
// (machine/running_transition.hpp) and its backend calls; the engine feeds it each
// outcome (volume_transaction.cpp). One step runs at a time; each ends with finish(),
// which starts the next.
//
// Over 400 lines because the engine is templates that every transition instantiates:
// they stay in one header, in the order a step runs them (the queue, backend calls,
// persistence, transactions, the shared pieces).

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>
#include <variant>

#include <caf/error.hpp>
#include <caf/expected.hpp>
#include <caf/typed_event_based_actor.hpp>
#include <caf/typed_response_promise.hpp>
#include <spdlog/spdlog.h>

#include "actors/machine/running_transition.hpp"
#include "actors/volume.hpp"
#include "core/errors.hpp"

namespace berth::detail {

using self_ptr = volume_actor::stateful_pointer<volume_state>;
using done_fn = std::function<void(caf::error)>;

/// The result of a side effect that reports only success.
using none = std::monostate;

/// Where the answer of a request answered with an R goes (the R of its
/// replies_to<...>::with<R> in actors.hpp): delivering anything else does not compile.
template <class R>
using promise = reply_to<R>;

/// Delivers a value or its error.
template <class R>
void deliver(promise<R>& rp, caf::expected<R> x) {
  if (x) {
    rp.deliver(std::move(*x));
  } else {
    rp.deliver(std::move(x.error()));
  }
}

// -- the queue --------------------------------------------------------------------

/// Queues a step; when a guard refuses it (its caller left, no such volume, another
/// owner's record, not reconciled) its `refuse` answers instead of `run`. `run` is
/// the transition; it answers and ends with finish().
void enqueue(self_ptr self, queued_step step);

/// The step of a request from a client answered with an R through `rp`, which `run`
/// answers.
template <class R, class Run>
queued_step answering_step(std::string what, admits who, record_owner owner, caller from,
                           promise<R> rp, Run run) {
  queued_step step;
  step.what = std::move(what);
  step.who = who;
  step.owner = owner;
  step.from = std::move(from);
  step.refuse = [rp](const caf::error& err) mutable { rp.deliver(err); };
  step.run = [rp, run = std::move(run)]() mutable { run(rp); };
  return step;
}

/// enqueue for a request from a client answered with an R through `rp`, which `run`
/// answers.
template <class R, class Run>
void enqueue_answering(self_ptr self, std::string what, admits who, record_owner owner, caller from,
                       promise<R> rp, Run run) {
  enqueue(
    self,
    answering_step<R>(std::move(what), who, owner, std::move(from), std::move(rp), std::move(run)));
}

/// enqueue for a CSI publish or unpublish, `change`: `run` runs it alone; when others
/// wait behind it, they share its turn instead (run_path_changes), and `rp` gets
/// its own outcome.
template <class Run>
void enqueue_path_change(self_ptr self, std::string what, caller from, path_change change,
                         promise<atom::ok> rp, Run run) {
  auto step = answering_step<atom::ok>(std::move(what), admits::existing, record_owner::csi,
                                       std::move(from), rp, std::move(run));
  step.change.emplace(std::move(change));
  step.acknowledge = [rp]() mutable { rp.deliver(atom::ok_v); };
  enqueue(self, std::move(step));
}

/// enqueue for a Docker Mount or Unmount, `change`: `run` runs it alone; when others
/// wait behind it and each only changes counts, they share its turn instead
/// (run_count_changes), and `rp` gets reply(committed record).
template <class R, class Run, class Reply>
void enqueue_count_change(self_ptr self, std::string what, caller from, count_change change,
                          promise<R> rp, Run run, Reply reply) {
  auto step = answering_step<R>(std::move(what), admits::existing, record_owner::docker,
                                std::move(from), rp, std::move(run));
  step.count.emplace(std::move(change));
  step.counted = [rp, reply](const volume_record& rec) mutable { rp.deliver(reply(rec)); };
  enqueue(self, std::move(step));
}

/// enqueue_answering for a request from an actor: makes the response promise `run`
/// answers.
template <class R, class Run>
caf::typed_response_promise<R> enqueue_request(self_ptr self, std::string what, admits who,
                                               record_owner owner, caller from, Run run) {
  auto rp = self->make_response_promise<R>();
  enqueue_answering<R>(self, std::move(what), who, owner, std::move(from), rp, std::move(run));
  return rp;
}

/// Queues a step of the volume's own, which skips the guards: a reconciliation
/// (admits::internal), dropped when the volume was removed meanwhile, or the settle of a
/// late call (admits::settle), which runs either way and decides from the record.
void enqueue_internal(self_ptr self, std::string what, std::function<void()> run,
                      admits who = admits::internal);

/// Ends the running step and starts the next one.
void finish(self_ptr self);

/// Answers `rp` and ends the step.
template <class R, class Reply>
void answer(self_ptr self, promise<R>& rp, Reply reply) {
  rp.deliver(std::move(reply));
  finish(self);
}

/// Logs the failure `err` of `what` after "volume NAME: ": as an error, or at debug
/// when it is a refusal beside a hung call (volume_machine::refused_beside_hung): the
/// hang was logged once when it began, and clients retry a hung volume as fast as they
/// are answered.
void log_failed(const volume_state& st, const std::string& what, const caf::error& err);

/// Answers `rp` once no step is running or queued (graceful stop).
void when_idle(self_ptr self, promise<atom::ok> rp);

/// Answers `rp` once no call is hung and the volume is idle: only then may it retire
/// without a second call starting beside a hung one in its successor.
void when_settled(self_ptr self, promise<atom::ok> rp);

/// The registry forgot the volume: refuses what is queued, then quits.
void retire(self_ptr self);

// -- backend calls ----------------------------------------------------------------

/// A backend call reported back (atom::done).
void on_call_done(self_ptr self, uint64_t token, caf::error err);

/// The volume's timer fired (atom::deadline): the current call times out if its
/// deadline passed; otherwise the timer is armed again for the rest of it.
void on_call_deadline(self_ptr self);

/// Carries out `work`; `then` runs in the actor with its error. A backend call that
/// does not finish within the backend timeout ends with ec::timeout (or goes on with
/// its after_timeout call); one that succeeds after that has its settle queued as an
/// internal step. While an earlier call is hung, `then` gets still_hung() and nothing
/// starts.
void run_work(self_ptr self, const work_plan& work, const done_fn& then);

// -- persistence ------------------------------------------------------------------

/// Stores `next`; `then` runs once it is durable (or with the error).
void persist(self_ptr self, shared_record next, const done_fn& then);

/// Forgets the volume in the durable state.
void persist_erase(self_ptr self, const std::string& name, const done_fn& then);

// -- transactions -----------------------------------------------------------------

/// A transition's work with a result of type T: the plan the driver carries out, and
/// where the result lands. The executor's task writes it before it reports back; the
/// actor reads it only after that report (message passing orders the two), and never
/// after a timeout.
template <class T>
struct work_of {
  work_plan plan;
  /// Made by on_backend and on_actor; none for work that reports only success.
  std::shared_ptr<std::optional<T>> result;

  /// The result, once the work succeeded.
  decltype(auto) value() const {
    if constexpr (std::is_same_v<T, none>) {
      return none{}; // a work that reports only success has nothing to read
    } else {
      return static_cast<T&>(**result);
    }
  }
};

/// The backend call `call` as a transition's work; T follows from what `work` returns
/// (caf::error: none, caf::expected<X>: X). `late` settles it when it succeeds after its
/// timeout.
template <class Work>
auto on_backend(backend_call call, Work work, late_settle late = {}) {
  using out = std::invoke_result_t<Work&, backend&>;
  if constexpr (std::is_same_v<out, caf::error>) {
    work_of<none> w;
    w.plan.call = backend_work{call, std::move(work), std::move(late), nullptr, false};
    return w;
  } else {
    using value = typename out::value_type;
    work_of<value> w;
    w.result = std::make_shared<std::optional<value>>();
    auto run = [work = std::move(work), slot = w.result](backend& b) -> caf::error {
      auto x = work(b);
      if (!x) {
        return std::move(x.error());
      }
      *slot = std::move(*x);
      return {};
    };
    w.plan.call = backend_work{call, std::move(run), std::move(late), nullptr, false};
    return w;
  }
}

/// Work on the actor thread, without a backend call (a reconciliation that needs no
/// host work); T follows from the caf::expected<T> `work` returns.
template <class Work>
auto on_actor(Work work) {
  using value = typename std::invoke_result_t<Work&>::value_type;
  work_of<value> w;
  w.result = std::make_shared<std::optional<value>>();
  w.plan.here = [work = std::move(work), slot = w.result]() mutable -> caf::error {
    auto x = work();
    if (!x) {
      return std::move(x.error());
    }
    *slot = std::move(*x);
    return {};
  };
  return w;
}

/// The work of a transition of the record only: there is nothing to do but change it.
inline work_of<none> record_only() {
  return {};
}

/// One transition that changes the host and then the record, all or nothing
/// (docs/design.md, "All or nothing, across crashes"): the record is committed
/// only once durable, and a side effect whose record cannot be saved is undone
/// before the error reaches the caller (actors/machine/record_transaction.hpp).
template <class T>
struct transition : transition_words {
  work_of<T> work;                            ///< the side effect
  record_change change = record_change::save; ///< what becomes of the record
  /// The record after the side effect, from the record before and its result
  /// (record_change::save, ::save_if_changed).
  std::function<volume_record(const volume_record&, const T&)> apply;
  undo_fn undo; ///< empty: the effect cannot or need not be undone
  /// The log line once committed, e.g. "volume v1 mounted at /m (id c89a…, count 1)",
  /// from the committed record (erased: the record that was). Empty, or an empty line: no
  /// line.
  std::function<std::string(const volume_record& next, const T&)> committed;
  bool creates = false; ///< committing it makes the volume exist
};

/// `t` with its result's type erased: the running transition and its work. `next`, if
/// any, is its end, given the result once its record is committed, or the error; empty,
/// the driver gives it one (a settle's).
template <class T>
planned_transition plan_of(transition<T> t,
                           std::function<void(caf::expected<T>, ending)> next = {}) {
  // Shared by the erased functions, so the result is read where it landed.
  auto desc = std::make_shared<const transition<T>>(std::move(t));
  running_transition r;
  r.words = desc;
  r.tx = record_transaction{{desc->change, desc->creates, static_cast<bool>(desc->undo)}};
  if (desc->apply) {
    r.apply = [desc](const volume_record& before) {
      return desc->apply(before, desc->work.value());
    };
  }
  r.undo = desc->undo;
  if (desc->committed) {
    r.committed = [desc](const volume_record& rec) {
      return desc->committed(rec, desc->work.value());
    };
  }
  if (next) {
    r.end = [desc, next = std::move(next)](caf::error err, ending how) {
      if (how != ending::committed) {
        next(std::move(err), how);
      } else {
        next(T{desc->work.value()}, how);
      }
    };
  }
  return {std::move(r), desc->work.plan};
}

/// Runs `p`: the volume's one running transition.
void begin_transition(self_ptr self, planned_transition p);

/// Runs `t` as transact does, but the step goes on: `next` gets the result once its
/// record is committed, or the error, and how it ended; it must end the step
/// (finish(), answer() or another transition). For a request that is two
/// transitions in one turn, and for the reconciliation.
template <class T>
void transact_then(self_ptr self, transition<T> t,
                   std::function<void(caf::expected<T>, ending)> next) {
  begin_transition(self, plan_of<T>(std::move(t), std::move(next)));
}

/// Runs `t`; `outcome` gets the result once its record is committed (then in
/// *self->state.rec()), or the error. The step ends after `outcome`.
template <class T>
void transact(self_ptr self, transition<T> t, std::function<void(caf::expected<T>)> outcome) {
  transact_then<T>(self, std::move(t), [self, outcome](caf::expected<T> out, ending) {
    outcome(std::move(out));
    finish(self);
  });
}

/// Runs `t`, then answers `rp` with reply(result, committed record) or the error.
template <class T, class R, class Reply>
void transact(self_ptr self, promise<R> rp, transition<T> t, Reply reply) {
  transact<T>(self, std::move(t), [self, rp, reply](caf::expected<T> out) mutable {
    if (!out) {
      rp.deliver(out.error());
    } else {
      rp.deliver(reply(*out, *self->state.rec()));
    }
  });
}

/// A transition of the record only (a counted mount, say): no backend call;
/// `next`, made from the committed record in this same turn, is saved and
/// committed, `line` logged, `on_commit` run (what counts the change, if anything),
/// `reply` answered.
template <class R, class Reply>
void commit(self_ptr self, promise<R> rp, volume_record next, Reply reply,
            std::string line, std::function<void()> on_commit = {}) {
  transition<none> t;
  t.what = "change of the record";
  t.apply = [next = std::move(next)](const volume_record&, none) { return next; };
  t.committed = [line = std::move(line)](const volume_record&, none) { return line; };
  // The persistence actor logs the write that failed ("state change(s) not saved");
  // the caller gets the error. A count never logged a line of its own for it.
  t.logs_failures = false;
  transact<none>(self, std::move(t), [rp, reply, on_commit](caf::expected<none> out) mutable {
    if (!out) {
      rp.deliver(out.error());
      return;
    }
    if (on_commit) {
      on_commit();
    }
    rp.deliver(reply);
  });
}

/// The reply of a transition that answers only "done".
inline constexpr auto reply_ok = [](const auto&...) { return atom::ok_v; };

// -- pieces shared by several transitions -------------------------------------------

/// The host unmount of `rec`: a timeout falls back to a lazy detach, so a dead NFS
/// server or a vanished network namespace never hangs the volume; a late success
/// reconciles the volume with the host.
work_of<none> host_unmount(const volume_record& rec);

/// Holds the record against the host (persistence/recovery/reconcile_volume) and commits what
/// changed. With `seen` (the mount points read at start) a volume that needs no
/// backend work reconciles here; otherwise on the executor, reading mountinfo
/// afresh. Until the first one settles the volume serves nothing.
void run_reconcile(self_ptr self, std::shared_ptr<const std::set<std::string>> seen);

/// The first reconciliation of a loaded volume ended (committed, failed or timed
/// out): it leaves telemetry's reconcile_pending. Later ones do nothing.
void end_first_reconcile(self_ptr self);

/// A late settle for a volume that exists: `decide` answers from its record. A volume
/// removed meanwhile has nothing of it left to settle.
template <class Decide>
late_settle while_present(Decide decide) {
  return [decide = std::move(decide)](const committed_record& now) {
    return now.exists() ? decide(*now) : settlement{};
  };
}

/// A late settle that reconciles the volume with the host: for a call whose late
/// success the record cannot express (an unmount, an unstage, an unpublish).
late_settle reconcile_later();

/// The settle of a side effect that landed after its timeout and that the record lacks:
/// a transition whose work, `undo`, takes it away again, and which changes no record.
/// `what` names the effect ("a late stage") for its error line.
settlement undo_late(const std::string& what, work_plan undo);

/// Settles a call that returned late, in its turn: carries out what `settle` answers
/// from the committed record now, and ends the step.
void settle_in_turn(self_ptr self, const late_settle& settle);

} // namespace berth::detail
