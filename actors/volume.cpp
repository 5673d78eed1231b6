#include "actors/volume.hpp"

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

namespace {

using self_ptr = volume_actor::stateful_pointer<volume_state>;
using done_fn = std::function<void(caf::error)>;

caf::error no_such_volume(const std::string& name) {
  return make_error(ec::not_found, "no such volume: " + name);
}

void pump(self_ptr self);

/// Ends the running transition and starts the next one.
void finish(self_ptr self) {
  self->state.busy = false;
  pump(self);
}

// -- backend calls ------------------------------------------------------------

using backend_work = std::function<std::pair<caf::error, std::string>(backend&)>;

/// Runs `work` on the executor; `then` runs in the actor with its result, or
/// with ec::timeout when it does not finish within the backend timeout.
void call_backend(self_ptr self, std::string what, backend_work work,
                  backend_continuation then) {
  auto& st = self->state;
  auto token = st.next_token++;
  st.current_token = token;
  st.current_call = what;
  st.continuation = std::move(then);
  auto hdl = caf::actor_cast<volume_actor>(self);
  auto storage = st.env.storage;
  auto queued = st.env.exec->submit([hdl, token, storage, work = std::move(work), what] {
    std::pair<caf::error, std::string> out;
    try {
      out = work(*storage);
    } catch (const std::exception& e) {
      out.first = make_error(ec::internal, what + " failed: " + e.what());
    }
    caf::anon_send(hdl, atom::done_v, token, std::move(out.first), std::move(out.second));
  });
  if (!queued) {
    st.current_token = 0;
    auto k = std::move(st.continuation);
    k(make_error(ec::unavailable, "backend executor is full or stopped; " + what + " of volume "
                                    + st.rec.name + " not started"),
      "");
    return;
  }
  self->delayed_send(hdl, st.env.backend_timeout, atom::deadline_v, token);
}

backend_work do_mount(volume_record rec) {
  return [rec](backend& b) -> std::pair<caf::error, std::string> {
    auto mp = b.mount(rec);
    if (!mp) {
      return {mp.error(), ""};
    }
    return {caf::error{}, *mp};
  };
}

backend_work do_unmount(volume_record rec, bool lazy) {
  return [rec, lazy](backend& b) -> std::pair<caf::error, std::string> {
    return {b.unmount(rec, lazy), ""};
  };
}

backend_work do_create(volume_record rec) {
  return [rec](backend& b) -> std::pair<caf::error, std::string> {
    return {b.create(rec), ""};
  };
}

backend_work do_remove(volume_record rec) {
  return [rec](backend& b) -> std::pair<caf::error, std::string> {
    return {b.remove(rec), ""};
  };
}

/// Unmounts the host mount; a timeout falls back to a lazy detach so a dead
/// NFS server or a vanished network namespace never hangs the volume.
void unmount_host(self_ptr self, const volume_record& rec, done_fn then) {
  call_backend(self, "unmount", do_unmount(rec, false),
               [self, rec, then](caf::error err, std::string) {
                 if (err && err.category() == caf::atom("berth")
                     && static_cast<ec>(err.code()) == ec::timeout) {
                   spdlog::warn("volume {}: unmount timed out, detaching lazily", rec.name);
                   call_backend(self, "lazy unmount", do_unmount(rec, true),
                                [then](caf::error err2, std::string) { then(err2); });
                   return;
                 }
                 then(err);
               });
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

// -- transitions ----------------------------------------------------------------

void run_create(self_ptr self, pending_op op) {
  auto& st = self->state;
  if (st.exists) {
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
  next.options = op.options;
  next.created_at = now_rfc3339();
  call_backend(self, "create", do_create(next), [self, next, op](caf::error err, std::string) mutable {
    if (err) {
      spdlog::error("volume {}: create failed: {}", next.name, describe(err));
      op.rp.deliver(err);
      finish(self);
      return;
    }
    persist(self, next, [self, next, op](caf::error perr) mutable {
      if (perr) {
        spdlog::error("volume {}: create not saved, undoing: {}", next.name, describe(perr));
        call_backend(self, "remove", do_remove(next),
                     [self, op, perr](caf::error, std::string) mutable {
                       op.rp.deliver(perr);
                       finish(self);
                     });
        return;
      }
      self->state.rec = next;
      self->state.exists = true;
      spdlog::info("volume {} created (backend {})", next.name, next.backend);
      op.rp.deliver(atom::ok_v);
      finish(self);
    });
  });
}

void run_mount(self_ptr self, pending_op op) {
  auto& st = self->state;
  auto next = st.rec;
  auto action = apply_mount(next, op.id);
  if (action == mount_action::count_only) {
    persist(self, next, [self, next, op](caf::error err) mutable {
      if (err) {
        op.rp.deliver(err);
      } else {
        self->state.rec = next;
        spdlog::info("volume {} mount counted (id {}, count {})", next.name, op.id.substr(0, 12),
                     next.mounts[op.id]);
        op.rp.deliver(next.mountpoint);
      }
      finish(self);
    });
    return;
  }
  call_backend(self, "mount", do_mount(st.rec),
               [self, next, op](caf::error err, std::string mp) mutable {
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
    persist(self, next, [self, next, op](caf::error err) mutable {
      if (err) {
        op.rp.deliver(err);
      } else {
        self->state.rec = next;
        spdlog::info("volume {} unmount counted (id {}, {} mount(s) left)", next.name,
                     op.id.substr(0, 12), total_mounts(next));
        op.rp.deliver(atom::ok_v);
      }
      finish(self);
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
                     [self, op, perr, name = next.name](caf::error merr, std::string) mutable {
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

void remove_storage(self_ptr self, pending_op op) {
  auto rec = self->state.rec;
  persist_erase(self, rec.name, [self, rec, op](caf::error perr) mutable {
    if (perr) {
      spdlog::error("volume {}: remove not saved: {}", rec.name, describe(perr));
      op.rp.deliver(perr);
      finish(self);
      return;
    }
    call_backend(self, "remove", do_remove(rec),
                 [self, rec, op](caf::error err, std::string) mutable {
      if (err) {
        // The volume is gone from berth's state; only its directory is left behind.
        spdlog::error("volume {} removed, but its storage was not deleted: {}", rec.name,
                      describe(err));
      } else {
        spdlog::info("volume {} removed", rec.name);
      }
      auto& st = self->state;
      st.exists = false;
      st.rec = volume_record{};
      st.rec.name = rec.name;
      op.rp.deliver(atom::ok_v);
      finish(self);
    });
  });
}

void run_remove(self_ptr self, pending_op op) {
  auto& st = self->state;
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

void start(self_ptr self, pending_op op) {
  auto& st = self->state;
  if (op.what != pending_op::kind::create && !st.exists) {
    op.rp.deliver(no_such_volume(st.rec.name));
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
  }
}

void pump(self_ptr self) {
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

caf::response_promise enqueue(self_ptr self, pending_op::kind what, std::string id,
                              option_map options) {
  auto rp = self->make_response_promise();
  self->state.queue.push_back(pending_op{what, std::move(id), std::move(options), rp});
  pump(self);
  return rp;
}

} // namespace

volume_actor::behavior_type volume(volume_actor::stateful_pointer<volume_state> self,
                                   volume_env env, volume_record rec, bool exists) {
  self->state.env = std::move(env);
  self->state.rec = std::move(rec);
  self->state.exists = exists;
  return {
    [self](atom::create, option_map& options) -> caf::result<atom::ok> {
      return enqueue(self, pending_op::kind::create, {}, std::move(options));
    },
    [self](atom::mount, std::string& id) -> caf::result<std::string> {
      return enqueue(self, pending_op::kind::mount, std::move(id), {});
    },
    [self](atom::unmount, std::string& id) -> caf::result<atom::ok> {
      return enqueue(self, pending_op::kind::unmount, std::move(id), {});
    },
    [self](atom::remove) -> caf::result<atom::ok> {
      return enqueue(self, pending_op::kind::remove, {}, {});
    },
    [self](atom::get) -> caf::result<volume_record> {
      if (!self->state.exists) {
        return no_such_volume(self->state.rec.name);
      }
      return self->state.rec;
    },
    [self](atom::drain) -> caf::result<atom::ok> {
      auto rp = self->make_response_promise();
      self->state.drain_waiters.push_back(rp);
      pump(self);
      return rp;
    },
    [self](atom::done, uint64_t token, caf::error& err, std::string& out) {
      auto& st = self->state;
      if (token == st.current_token) {
        st.current_token = 0;
        auto k = std::move(st.continuation);
        k(std::move(err), std::move(out));
        return;
      }
      auto it = st.abandoned.find(token);
      if (it == st.abandoned.end()) {
        return;
      }
      spdlog::warn("volume {}: {} finished after its timeout ({})", st.rec.name, it->second,
                   err ? describe(err) : "succeeded");
      if (it->second == "mount" && !err && !st.rec.mounted) {
        // The caller was told it failed: a mount the state lacks is undone.
        auto rec = st.rec;
        st.env.exec->submit([storage = st.env.storage, rec] { storage->unmount(rec, true); });
      }
      st.abandoned.erase(it);
    },
    [self](atom::deadline, uint64_t token) {
      auto& st = self->state;
      if (token != st.current_token) {
        return;
      }
      st.abandoned.emplace(token, st.current_call);
      st.current_token = 0;
      auto k = std::move(st.continuation);
      k(make_error(ec::timeout, st.current_call + " of volume " + st.rec.name
                                  + " did not finish within "
                                  + std::to_string(st.env.backend_timeout.count()) + " ms"),
        "");
    },
    [self](atom::retire) {
      auto& st = self->state;
      for (auto& op : st.queue) {
        op.rp.deliver(no_such_volume(st.rec.name));
      }
      st.queue.clear();
      self->quit();
    },
  };
}

} // namespace berth
