#pragma once

// The building blocks every volume transition is made of (actors/volume.cpp
// for Docker, actors/volume_csi.cpp for CSI): run a backend call on the
// executor, persist, end the transition.

#include <functional>
#include <string>
#include <utility>

#include <caf/error.hpp>
#include <caf/message.hpp>
#include <caf/typed_event_based_actor.hpp>
#include <spdlog/spdlog.h>

#include "actors/volume.hpp"
#include "core/errors.hpp"

namespace berth::detail {

using self_ptr = volume_actor::stateful_pointer<volume_state>;
using done_fn = std::function<void(caf::error)>;

/// Blocking work on the backend; returns an error or a result (may be empty).
using backend_work = std::function<std::pair<caf::error, caf::message>(backend&)>;

caf::error no_such_volume(const std::string& name);

/// ec::aborted: the volume's hung call (named, with its start) has not returned,
/// so `what` does not start.
caf::error still_hung(const volume_state& st, const std::string& what);

/// Ends the running transition and starts the next one.
void finish(self_ptr self);

/// Runs `work` on the executor; `then` runs in the actor with its result, or
/// with ec::timeout when it does not finish within the backend timeout. When the
/// call succeeds after that timeout, `undo` is queued as a transition.
void call_backend(self_ptr self, std::string what, backend_work work,
                  backend_continuation then, late_undo undo = {});

/// call_backend for work that yields only an error.
void call_backend(self_ptr self, std::string what, std::function<caf::error(backend&)> work,
                  done_fn then, late_undo undo = {});

/// Stores `next`; `then` runs once it is durable (or with the error).
void persist(self_ptr self, const volume_record& next, done_fn then);

/// Answers `op` with `reply` (or the error) once `next` is durable, committing it.
template <class Reply>
void persist_and_reply(self_ptr self, volume_record next, pending_op op, Reply reply,
                       std::function<void()> on_committed = {});

/// Creates `next`'s storage, persists `next` and commits it (the volume exists),
/// then answers `op` with `reply`. A failed persist removes the storage again
/// (all or nothing); either failure reaches the caller.
template <class Reply>
void create_and_commit(self_ptr self, volume_record next, pending_op op, Reply reply);

/// "created (backend block, 1073741824 bytes, from snapshot:s1)" for the log.
std::string describe_creation(const volume_record& rec);

/// Holds the record against the host (recovery/reconcile_volume) and commits what
/// changed. With `seen` (the mount points read at start) a volume that needs no
/// backend work reconciles here; otherwise on the executor, reading mountinfo
/// afresh. Until the first one settles the volume serves nothing.
void run_reconcile(self_ptr self, std::shared_ptr<const std::set<std::string>> seen);

/// A late settle that reconciles the volume with the host: for a call whose late
/// success the record cannot express (an unmount, an unstage, an unpublish).
late_undo reconcile_later(self_ptr self);

/// Forgets the volume in the durable state.
void persist_erase(self_ptr self, const std::string& name, done_fn then);

// -- CSI transitions (actors/volume_csi.cpp) -------------------------------------

void run_csi_create(self_ptr self, pending_op op);
void run_stage(self_ptr self, pending_op op);
void run_unstage(self_ptr self, pending_op op);
void run_publish(self_ptr self, pending_op op);
void run_unpublish(self_ptr self, pending_op op);
void run_expand(self_ptr self, pending_op op);
void run_grow(self_ptr self, pending_op op);
void run_stats(self_ptr self, pending_op op);

// -- template definitions ----------------------------------------------------------

template <class Reply>
void persist_and_reply(self_ptr self, volume_record next, pending_op op, Reply reply,
                       std::function<void()> on_committed) {
  persist(self, next, [self, next, op, reply, on_committed](caf::error err) mutable {
    if (err) {
      op.rp.deliver(err);
    } else {
      self->state.rec = std::move(next);
      if (on_committed) {
        on_committed();
      }
      op.rp.deliver(std::move(reply));
    }
    finish(self);
  });
}

template <class Reply>
void create_and_commit(self_ptr self, volume_record next, pending_op op, Reply reply) {
  call_backend(self, "create", [next](backend& b) { return b.create(next); },
               [self, next, op, reply](caf::error err) mutable {
    if (err) {
      spdlog::error("{} {}: create failed: {}", next.kind, next.name, describe(err));
      op.rp.deliver(err);
      finish(self);
      return;
    }
    persist(self, next, [self, next, op, reply](caf::error perr) mutable {
      if (perr) {
        spdlog::error("{} {}: create not saved, undoing: {}", next.kind, next.name,
                      describe(perr));
        call_backend(self, "remove", [next](backend& b) { return b.remove(next); },
                     [self, op, perr, name = next.name](caf::error uerr) mutable {
                       if (uerr) {
                         spdlog::error("volume {}: undoing create failed: {}", name,
                                       describe(uerr));
                       }
                       op.rp.deliver(perr);
                       finish(self);
                     });
        return;
      }
      self->state.rec = next;
      self->state.exists = true;
      spdlog::info("{} {} {}", next.kind, next.name, describe_creation(next));
      op.rp.deliver(std::move(reply));
      finish(self);
    });
  });
}

} // namespace berth::detail
