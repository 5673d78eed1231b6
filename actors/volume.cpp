#include "actors/volume.hpp"
#include "actors/detail/volume_steps.hpp"

// One transition at a time, all or nothing:
//
//   request ─▶ queue ─▶ validate ─▶ backend call (executor, timeout) ─▶ persist ─▶ reply
//                                        │ fails: reply error              │ fails: undo the
//                                        ▼                                 ▼ side effect, reply
//
// Requests that arrive meanwhile wait in `queue`; other volumes never wait.

#include <caf/actor_cast.hpp>
#include <caf/send.hpp>
#include <caf/typed_event_based_actor.hpp>
#include <spdlog/spdlog.h>

#include "actors/volume_rules.hpp"
#include "core/errors.hpp"

namespace berth {

using namespace detail;

namespace detail {

caf::error no_such_volume(const std::string& name) {
  return make_error(ec::not_found, "no such volume: " + name);
}

void pump(self_ptr self);

void finish(self_ptr self) {
  self->state.busy = false;
  pump(self);
}

// -- backend calls ------------------------------------------------------------

caf::error still_hung(const volume_state& st, const std::string& what) {
  const auto& h = st.hung.begin()->second;
  auto secs = std::chrono::duration_cast<std::chrono::seconds>(std::chrono::steady_clock::now()
                                                               - h.since);
  return make_error(ec::aborted, "volume " + st.rec.name + ": its " + h.what + " started at "
                                   + h.started + " has not returned (hung for "
                                   + std::to_string(secs.count()) + " s); " + what
                                   + " not started, retry later");
}

namespace {

/// The one place a backend call starts. `despite_hung` is only for the lazy
/// detach that stands in for a hung unmount.
void submit_call(self_ptr self, std::string what, backend_work work, backend_continuation then,
                 late_undo undo, bool despite_hung) {
  auto& st = self->state;
  if (!st.hung.empty() && !despite_hung) {
    // One backend call per volume, ever: a retry never starts a second one.
    then(still_hung(st, what), caf::message{});
    return;
  }
  auto token = st.next_token++;
  auto hdl = caf::actor_cast<volume_actor>(self);
  auto storage = st.env.storage;
  auto ticket = st.env.exec->submit([hdl, token, storage, work = std::move(work), what] {
    std::pair<caf::error, caf::message> out;
    try {
      out = work(*storage);
    } catch (const std::exception& e) {
      out.first = make_error(ec::internal, what + " failed: " + e.what());
    } catch (...) {
      // Always answer: a call that never reports back would leave the volume hung.
      out.first = make_error(ec::internal, what + " failed with a non-standard exception");
    }
    caf::anon_send(hdl, atom::done_v, token, std::move(out.first), std::move(out.second));
  });
  if (!ticket) {
    then(make_error(ec::unavailable, "backend executor is full or stopped; " + what
                                       + " of volume " + st.rec.name + " not started"),
         caf::message{});
    return;
  }
  st.current_token = token;
  st.current_call = what;
  st.current_started = now_rfc3339();
  st.current_ticket = std::move(ticket);
  st.continuation = std::move(then);
  st.current_undo = std::move(undo);
  self->delayed_send(hdl, st.env.backend_timeout, atom::deadline_v, token);
}

} // namespace

void call_backend(self_ptr self, std::string what, backend_work work,
                  backend_continuation then, late_undo undo) {
  submit_call(self, std::move(what), std::move(work), std::move(then), std::move(undo), false);
}

void call_backend(self_ptr self, std::string what, std::function<caf::error(backend&)> work,
                  done_fn then, late_undo undo) {
  call_backend(
    self, std::move(what),
    [work = std::move(work)](backend& b) { return std::make_pair(work(b), caf::message{}); },
    [then = std::move(then)](caf::error err, caf::message) { then(std::move(err)); },
    std::move(undo));
}

} // namespace detail

namespace {

/// The mountpoint a mount call returned (empty on error).
std::string mountpoint_of(const caf::message& msg) {
  return msg.match_elements<std::string>() ? msg.get_as<std::string>(0) : std::string{};
}

backend_work do_mount(volume_record rec) {
  return [rec](backend& b) -> std::pair<caf::error, caf::message> {
    auto mp = b.mount(rec);
    if (!mp) {
      return {mp.error(), caf::message{}};
    }
    return {caf::error{}, caf::make_message(*mp)};
  };
}

/// Unmounts the host mount; a timeout falls back to a lazy detach so a dead
/// NFS server or a vanished network namespace never hangs the volume. The detach
/// is the one call that may start while another (the hung unmount) has not
/// returned: MNT_DETACH does not wait for the server.
void unmount_host(self_ptr self, const volume_record& rec, done_fn then) {
  call_backend(self, "unmount", [rec](backend& b) { return b.unmount(rec, false); },
               [self, rec, then](caf::error err) {
                 if (err && err.category() == caf::atom("berth")
                     && static_cast<ec>(err.code()) == ec::timeout) {
                   spdlog::warn("volume {}: unmount timed out, detaching lazily", rec.name);
                   submit_call(
                     self, "lazy unmount",
                     [rec](backend& b) {
                       return std::make_pair(b.unmount(rec, true), caf::message{});
                     },
                     [then](caf::error lerr, caf::message) { then(std::move(lerr)); }, {}, true);
                   return;
                 }
                 then(err);
               },
               reconcile_later(self));
}

} // namespace

namespace detail {

std::string describe_creation(const volume_record& rec) {
  std::string out = "created (backend " + rec.backend;
  if (rec.capacity_bytes != 0) {
    out += ", " + std::to_string(rec.capacity_bytes) + " bytes";
  }
  if (!rec.source.empty()) {
    out += ", from " + rec.source;
  }
  return out + ")";
}

// -- persistence ----------------------------------------------------------------

void persist(self_ptr self, const volume_record& next, done_fn then) {
  self->request(self->state.env.persistence, caf::infinite, atom::put_v, next)
    .then([then](atom::ok) { then({}); }, [then](caf::error& err) { then(err); });
}

void persist_erase(self_ptr self, const std::string& name, done_fn then) {
  self->request(self->state.env.persistence, caf::infinite, atom::erase_v, name)
    .then([then](atom::ok) { then({}); }, [then](caf::error& err) { then(err); });
}

} // namespace detail

namespace {

// -- transitions ----------------------------------------------------------------

void run_create(self_ptr self, pending_op op) {
  auto& st = self->state;
  if (st.exists) {
    if (st.rec.kind != kind_volume || st.rec.backend != st.env.storage->name()) {
      op.rp.deliver(make_error(ec::already_exists, st.rec.kind + " " + st.rec.name
                                                     + " already exists on backend "
                                                     + st.rec.backend));
      finish(self);
      return;
    }
    if (auto err = check_recreate(st.rec, op.options)) {
      op.rp.deliver(err);
    } else {
      op.rp.deliver(atom::ok_v);
    }
    finish(self);
    return;
  }
  volume_record next;
  next.name = st.rec.name;
  next.backend = st.env.storage->name();
  next.owner = owner_docker;
  next.options = op.options;
  next.created_at = now_rfc3339();
  create_and_commit(self, std::move(next), std::move(op), atom::ok_v);
}

void run_mount(self_ptr self, pending_op op) {
  auto& st = self->state;
  if (auto err = check_mount(st.rec, op.id)) {
    op.rp.deliver(err);
    finish(self);
    return;
  }
  auto next = st.rec;
  auto action = apply_mount(next, op.id);
  if (action == mount_action::count_only) {
    auto mp = next.mountpoint;
    auto count = next.mounts[op.id];
    persist_and_reply(self, std::move(next), op, mp, [self, op, count] {
      spdlog::info("volume {} mount counted (id {}, count {})", self->state.rec.name,
                   op.id.substr(0, 12), count);
    });
    return;
  }
  call_backend(self, "mount", do_mount(st.rec),
               [self, next, op](caf::error err, caf::message result) mutable {
    auto mp = mountpoint_of(result);
    if (err) {
      spdlog::error("volume {}: mount failed: {}", next.name, describe(err));
      op.rp.deliver(err);
      finish(self);
      return;
    }
    set_mounted(next, mp);
    persist(self, next, [self, next, op, mp](caf::error perr) mutable {
      if (perr) {
        // All or nothing (DESIGN bug 3): the mount is undone before the error leaves.
        spdlog::error("volume {}: mount not saved, unmounting again: {}", next.name,
                      describe(perr));
        unmount_host(self, next, [self, op, perr, name = next.name](caf::error uerr) mutable {
          if (uerr) {
            spdlog::error("volume {}: rollback unmount failed: {}", name, describe(uerr));
          }
          op.rp.deliver(perr);
          finish(self);
        });
        return;
      }
      self->state.rec = next;
      spdlog::info("volume {} mounted at {} (id {}, count 1)", next.name, mp, op.id.substr(0, 12));
      op.rp.deliver(mp);
      finish(self);
    });
  }, [self] {
    // The caller was told the mount failed: a mount the record lacks is undone.
    if (self->state.rec.mounted) {
      finish(self);
      return;
    }
    unmount_host(self, self->state.rec, [self](caf::error err) {
      if (err) {
        spdlog::error("volume {}: undoing a late mount failed: {}", self->state.rec.name,
                      describe(err));
      }
      finish(self);
    });
  });
}

void run_unmount(self_ptr self, pending_op op) {
  auto& st = self->state;
  auto next = st.rec;
  auto action = apply_unmount(next, op.id);
  if (action == unmount_action::unknown_id) {
    spdlog::info("volume {}: unmount of unknown id {} ignored", next.name, op.id.substr(0, 12));
    op.rp.deliver(atom::ok_v);
    finish(self);
    return;
  }
  if (action == unmount_action::count_only) {
    auto left = total_mounts(next);
    persist_and_reply(self, std::move(next), op, atom::ok_v, [self, op, left] {
      spdlog::info("volume {} unmount counted (id {}, {} mount(s) left)", self->state.rec.name,
                   op.id.substr(0, 12), left);
    });
    return;
  }
  auto before = st.rec;
  unmount_host(self, before, [self, next, before, op](caf::error err) mutable {
    if (err) {
      spdlog::error("volume {}: unmount failed: {}", next.name, describe(err));
      op.rp.deliver(err);
      finish(self);
      return;
    }
    set_unmounted(next);
    persist(self, next, [self, next, before, op](caf::error perr) mutable {
      if (perr) {
        spdlog::error("volume {}: unmount not saved, mounting again: {}", next.name,
                      describe(perr));
        call_backend(self, "mount", do_mount(before),
                     [self, op, perr, name = next.name](caf::error merr, caf::message) mutable {
                       if (merr) {
                         spdlog::error("volume {}: rollback mount failed: {}", name,
                                       describe(merr));
                       }
                       op.rp.deliver(perr);
                       finish(self);
                     });
        return;
      }
      self->state.rec = next;
      spdlog::info("volume {} unmounted (id {}, count 0)", next.name, op.id.substr(0, 12));
      op.rp.deliver(atom::ok_v);
      finish(self);
    });
  });
}

/// Forgets the volume once its storage is gone: erases the record, then the actor
/// holds no volume. `then` gets the persist error, if any.
void forget_removed(self_ptr self, const std::string& why, done_fn then) {
  auto name = self->state.rec.name;
  persist_erase(self, name, [self, name, why, then](caf::error perr) {
    if (perr) {
      // The storage is gone but the record stays: a retried Remove finishes it.
      spdlog::error("volume {}: storage deleted, but the removal was not saved: {}", name,
                    describe(perr));
      then(perr);
      return;
    }
    auto& st = self->state;
    st.exists = false;
    st.rec = volume_record{};
    st.rec.name = name;
    spdlog::info("volume {} removed{}", name, why);
    then({});
  });
}

/// Deletes the storage first and forgets the name only after (DESIGN bug 8): a
/// failed or timed-out deletion leaves the volume present, so a re-create can never
/// share a name with storage that is still being deleted. A crash in between
/// leaves a record whose storage is gone; the retried Remove (idempotent) ends it.
void remove_storage(self_ptr self, pending_op op) {
  auto rec = self->state.rec;
  // A deletion that returns after its timeout is adopted: the storage is gone.
  late_undo adopt = [self] {
    forget_removed(self, " (its deletion returned after its timeout)",
                   [self](caf::error) { finish(self); });
  };
  call_backend(self, "remove", [rec](backend& b) { return b.remove(rec); },
               [self, rec, op](caf::error err) mutable {
    if (err) {
      spdlog::error("volume {}: remove failed, the volume stays: {}", rec.name, describe(err));
      op.rp.deliver(err);
      finish(self);
      return;
    }
    forget_removed(self, "", [self, op](caf::error perr) mutable {
      if (perr) {
        op.rp.deliver(perr);
      } else {
        op.rp.deliver(atom::ok_v);
      }
      finish(self);
    });
  }, std::move(adopt));
}

void run_remove(self_ptr self, pending_op op) {
  auto& st = self->state;
  if (!op.id.empty() && st.rec.kind != op.id) {
    // op.id holds the kind the caller asked to remove: another kind is not it.
    op.rp.deliver(make_error(ec::not_found, "no " + op.id + " " + st.rec.name + " (it is a "
                                              + st.rec.kind + ")"));
    finish(self);
    return;
  }
  if (auto err = check_remove(st.rec)) {
    op.rp.deliver(err);
    finish(self);
    return;
  }
  if (!st.rec.mounted) {
    remove_storage(self, std::move(op));
    return;
  }
  // Mounted by an older state without counts: unmount first, never rm through a mount.
  spdlog::info("volume {}: still mounted without mount IDs, unmounting before remove",
               st.rec.name);
  unmount_host(self, st.rec, [self, op](caf::error err) mutable {
    if (err) {
      op.rp.deliver(err);
      finish(self);
      return;
    }
    set_unmounted(self->state.rec);
    remove_storage(self, std::move(op));
  });
}

/// "mount (id c89a…)" for the log.
std::string describe_op(const pending_op& op) {
  switch (op.what) {
    case pending_op::kind::mount:
      return "mount (id " + op.id.substr(0, 12) + ")";
    case pending_op::kind::csi_create:
      return "create";
    case pending_op::kind::stage:
      return "stage at " + op.stage.staging_path;
    case pending_op::kind::publish:
      return "publish at " + op.pub.target;
    default:
      return "request";
  }
}

void start(self_ptr self, pending_op op) {
  auto& st = self->state;
  bool creates = op.what == pending_op::kind::create || op.what == pending_op::kind::csi_create;
  bool internal = op.what == pending_op::kind::undo_late || op.what == pending_op::kind::reconcile;
  if (internal && !st.exists) {
    finish(self); // removed meanwhile: nothing of it is left to undo
    return;
  }
  if (auto why = op.from.gone(); !why.empty()) {
    // Only acquiring requests carry a caller: a release still runs when its client
    // left (skipping an Unmount would leak a count nobody sends again).
    spdlog::warn("volume {}: {} not started: its caller went away before its turn ({})",
                 st.rec.name, describe_op(op), why);
    op.rp.deliver(make_error(ec::aborted, "volume " + st.rec.name + ": " + describe_op(op)
                                            + " not started: the caller went away (" + why
                                            + ")"));
    finish(self);
    return;
  }
  if (!creates && !st.exists) {
    op.rp.deliver(no_such_volume(st.rec.name));
    finish(self);
    return;
  }
  if (st.exists && !op.owner.empty()) {
    // Docker and CSI are separate namespaces: neither acts on the other's records.
    if (auto err = check_owner(st.rec, op.owner, creates)) {
      op.rp.deliver(err);
      finish(self);
      return;
    }
  }
  if (!st.reconciled && !internal) {
    // Its record may not match the host: nothing is served from it, not even a count.
    op.rp.deliver(!st.hung.empty()
                    ? still_hung(st, "request")
                    : make_error(ec::aborted, "volume " + st.rec.name
                                                + " is not reconciled with the host yet; retry later"));
    finish(self);
    return;
  }
  if (creates && !st.hung.empty()) {
    // A hung call (a Remove, say) may still change what exists: "already exists"
    // now could be a lie a moment later.
    op.rp.deliver(still_hung(st, "create"));
    finish(self);
    return;
  }
  switch (op.what) {
    case pending_op::kind::create:
      run_create(self, std::move(op));
      return;
    case pending_op::kind::mount:
      run_mount(self, std::move(op));
      return;
    case pending_op::kind::unmount:
      run_unmount(self, std::move(op));
      return;
    case pending_op::kind::remove:
      run_remove(self, std::move(op));
      return;
    case pending_op::kind::csi_create:
      run_csi_create(self, std::move(op));
      return;
    case pending_op::kind::stage:
      run_stage(self, std::move(op));
      return;
    case pending_op::kind::unstage:
      run_unstage(self, std::move(op));
      return;
    case pending_op::kind::publish:
      run_publish(self, std::move(op));
      return;
    case pending_op::kind::unpublish:
      run_unpublish(self, std::move(op));
      return;
    case pending_op::kind::expand:
      run_expand(self, std::move(op));
      return;
    case pending_op::kind::grow:
      run_grow(self, std::move(op));
      return;
    case pending_op::kind::stats:
      run_stats(self, std::move(op));
      return;
    case pending_op::kind::reconcile:
      run_reconcile(self, self->state.env.reconcile_with);
      self->state.env.reconcile_with = nullptr; // only the first uses the start-up view
      return;
    case pending_op::kind::undo_late:
      op.undo();
      return;
  }
}

} // namespace

void detail::pump(self_ptr self) {
  auto& st = self->state;
  while (!st.busy && !st.queue.empty()) {
    auto op = std::move(st.queue.front());
    st.queue.pop_front();
    st.busy = true;
    start(self, std::move(op));
  }
  if (!st.busy && st.queue.empty()) {
    for (auto& rp : st.drain_waiters) {
      rp.deliver(atom::ok_v);
    }
    st.drain_waiters.clear();
  }
}

namespace {

/// The namespace a request of this kind comes from; remove says its own.
std::string owner_of_request(pending_op::kind what) {
  using k = pending_op::kind;
  switch (what) {
    case k::create:
    case k::mount:
    case k::unmount:
      return owner_docker;
    case k::csi_create:
    case k::stage:
    case k::unstage:
    case k::publish:
    case k::unpublish:
    case k::expand:
    case k::grow:
    case k::stats:
      return owner_csi;
    case k::remove:    // the message names its owner
    case k::reconcile: // internal: the volume's own, whoever owns it
    case k::undo_late:
      return "";
  }
  return "";
}

/// Queues a request; `fill` sets its payload.
template <class Fill>
caf::response_promise enqueue(self_ptr self, pending_op::kind what, Fill fill) {
  pending_op op;
  op.what = what;
  op.owner = owner_of_request(what);
  op.rp = self->make_response_promise();
  fill(op);
  auto rp = op.rp;
  self->state.queue.push_back(std::move(op));
  pump(self);
  return rp;
}

caf::response_promise enqueue(self_ptr self, pending_op::kind what, std::string id = {}) {
  return enqueue(self, what, [&](pending_op& op) { op.id = std::move(id); });
}

} // namespace

volume_actor::behavior_type volume(volume_actor::stateful_pointer<volume_state> self,
                                   volume_env env, volume_record rec, bool exists) {
  self->state.env = std::move(env);
  self->state.rec = std::move(rec);
  self->state.exists = exists;
  if (exists && self->state.env.reconcile_with) {
    // Loaded from state: it agrees with the host before it serves anything.
    self->state.reconciled = false;
    enqueue(self, pending_op::kind::reconcile, [](pending_op&) {});
  }
  return {
    [self](atom::create, option_map& options) -> caf::result<atom::ok> {
      return enqueue(self, pending_op::kind::create,
                     [&](pending_op& op) { op.options = std::move(options); });
    },
    [self](atom::mount, std::string& id, caller& from) -> caf::result<std::string> {
      return enqueue(self, pending_op::kind::mount, [&](pending_op& op) {
        op.id = std::move(id);
        op.from = std::move(from);
      });
    },
    [self](atom::unmount, std::string& id) -> caf::result<atom::ok> {
      return enqueue(self, pending_op::kind::unmount, std::move(id));
    },
    [self](atom::remove, std::string& owner, std::string& kind) -> caf::result<atom::ok> {
      return enqueue(self, pending_op::kind::remove, [&](pending_op& op) {
        op.owner = std::move(owner);
        op.id = std::move(kind);
      });
    },
    // -- CSI ---------------------------------------------------------------------
    [self](atom::create, volume_spec& spec) -> caf::result<volume_record> {
      return enqueue(self, pending_op::kind::csi_create, [&](pending_op& op) {
        op.from = spec.from;
        op.spec = std::move(spec);
      });
    },
    [self](atom::stage, stage_request& req) -> caf::result<atom::ok> {
      return enqueue(self, pending_op::kind::stage, [&](pending_op& op) {
        op.from = req.from;
        op.stage = std::move(req);
      });
    },
    [self](atom::unstage, std::string& path) -> caf::result<atom::ok> {
      return enqueue(self, pending_op::kind::unstage, std::move(path));
    },
    [self](atom::publish, publish_request& req) -> caf::result<atom::ok> {
      return enqueue(self, pending_op::kind::publish, [&](pending_op& op) {
        op.from = req.from;
        op.pub = std::move(req);
      });
    },
    [self](atom::unpublish, std::string& target) -> caf::result<atom::ok> {
      return enqueue(self, pending_op::kind::unpublish, std::move(target));
    },
    [self](atom::expand, uint64_t bytes) -> caf::result<uint64_t> {
      return enqueue(self, pending_op::kind::expand, [&](pending_op& op) { op.bytes = bytes; });
    },
    [self](atom::modify, modify_request&) -> caf::result<volume_record> {
      // The coalescing mailbox comes next (issue 8); until then nothing is modified.
      return make_error(ec::unsupported, "volume " + self->state.rec.name
                                           + ": modify is not implemented yet");
    },
    [](atom::close_window, uint64_t) {},
    [self](atom::grow, std::string& path) -> caf::result<uint64_t> {
      return enqueue(self, pending_op::kind::grow, std::move(path));
    },
    [self](atom::stats, std::string& path) -> caf::result<volume_stats> {
      return enqueue(self, pending_op::kind::stats, std::move(path));
    },
    [self](atom::get) -> caf::result<volume_record> {
      if (!self->state.exists) {
        return no_such_volume(self->state.rec.name);
      }
      return self->state.rec;
    },
    [self](atom::get, const std::string& owner) -> caf::result<volume_record> {
      if (!self->state.exists) {
        return no_such_volume(self->state.rec.name);
      }
      if (auto err = check_owner(self->state.rec, owner, false)) {
        return err;
      }
      return self->state.rec;
    },
    [self](atom::drain) -> caf::result<atom::ok> {
      auto rp = self->make_response_promise();
      self->state.drain_waiters.push_back(rp);
      pump(self);
      return rp;
    },
    [self](atom::done, uint64_t token, caf::error& err, caf::message& out) {
      auto& st = self->state;
      if (token == st.current_token) {
        st.current_token = 0;
        st.current_ticket = nullptr;
        auto k = std::move(st.continuation);
        k(std::move(err), std::move(out));
        return;
      }
      auto it = st.hung.find(token);
      if (it == st.hung.end()) {
        return;
      }
      auto call = std::move(it->second);
      st.hung.erase(it);
      spdlog::warn("volume {}: {} (started {}) returned after its timeout ({}){}", st.rec.name,
                   call.what, call.started, err ? describe(err) : "succeeded",
                   st.hung.empty() ? "; the volume is certain again" : "");
      if (!err && call.settle) {
        // Its caller was told it failed: settle it in turn, so no retry races it.
        enqueue(self, pending_op::kind::undo_late,
                [&](pending_op& op) { op.undo = std::move(call.settle); });
      }
    },
    [self](atom::deadline, uint64_t token) {
      auto& st = self->state;
      if (token != st.current_token) {
        return;
      }
      st.current_token = 0;
      auto limit = std::to_string(st.env.backend_timeout.count()) + " ms";
      caf::error timed_out;
      if (st.env.exec->abandon(st.current_ticket) == executor::abandoned::dropped) {
        // It never started (every worker was busy): nothing happened, nothing is uncertain.
        timed_out = make_error(ec::timeout, st.current_call + " of volume " + st.rec.name
                                              + " did not start within " + limit
                                              + " (the backend executor is busy); retry");
      } else {
        spdlog::warn("volume {}: {} did not return within {}; the volume is uncertain until "
                     "it does, and starts no other backend call",
                     st.rec.name, st.current_call, limit);
        st.hung.emplace(token, hung_call{st.current_call, st.current_started,
                                         std::chrono::steady_clock::now(),
                                         std::move(st.current_undo)});
        timed_out = make_error(ec::timeout, st.current_call + " of volume " + st.rec.name
                                              + " did not finish within " + limit);
      }
      st.current_ticket = nullptr;
      st.current_undo = nullptr;
      auto k = std::move(st.continuation);
      k(std::move(timed_out), caf::message{});
    },
    [self](atom::retire) {
      auto& st = self->state;
      for (auto& op : st.queue) {
        if (op.what != pending_op::kind::undo_late && op.what != pending_op::kind::reconcile) {
          op.rp.deliver(no_such_volume(st.rec.name));
        }
      }
      st.queue.clear();
      self->quit();
    },
  };
}

} // namespace berth
