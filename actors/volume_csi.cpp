// The CSI transitions of one volume. Same shape as the Docker ones in
// actors/volume.cpp, all or nothing:
//
//   check (csi_rules) ─▶ backend call (executor, timeout) ─▶ persist ─▶ reply
//        │ done: reply at once          │ fails: reply        │ fails: undo, reply
//
// Stage, publish and expand change the record and are persisted; grow and stats
// only read it, but still take their turn so they never race a transition.

#include <caf/make_message.hpp>
#include <spdlog/spdlog.h>

#include "actors/csi_rules.hpp"
#include "actors/detail/volume_steps.hpp"
#include "core/errors.hpp"

namespace berth::detail {

namespace {

template <class T>
std::pair<caf::error, caf::message> to_result(caf::expected<T> x) {
  if (!x) {
    return {x.error(), caf::message{}};
  }
  return {caf::error{}, caf::make_message(std::move(*x))};
}

template <class T>
T value_of(const caf::message& msg) {
  return msg.match_elements<T>() ? msg.get_as<T>(0) : T{};
}

/// Replies `err` and ends the transition.
void refuse(self_ptr self, pending_op& op, const caf::error& err) {
  op.rp.deliver(err);
  finish(self);
}

/// Ends a transition that its check settled: refused, or already done (`reply`).
/// Returns false when the transition must run.
template <class Reply>
bool settled(self_ptr self, pending_op& op, const caf::expected<csi_action>& action,
             Reply reply) {
  if (!action) {
    refuse(self, op, action.error());
    return true;
  }
  if (*action == csi_action::done) {
    op.rp.deliver(std::move(reply));
    finish(self);
    return true;
  }
  return false;
}

/// Logs a failed undo; the original error still goes to the caller.
done_fn log_undo(const std::string& volume, const std::string& what) {
  return [volume, what](caf::error err) {
    if (err) {
      spdlog::error("volume {}: undoing {} failed: {}", volume, what, describe(err));
    }
  };
}

/// True when `err` says the backend does not serve the call.
bool is_unsupported(const caf::error& err) {
  return err && err.category() == caf::atom("berth")
         && static_cast<ec>(err.code()) == ec::unsupported;
}

/// A stage that lands after its timeout is swept, unless the record says the
/// volume is staged there (a retry got it meanwhile). The sweep gets the record
/// as it is now: the backend detaches the device only when that record stages
/// the volume nowhere, so a newer stage elsewhere keeps its device.
late_undo undo_late_stage(self_ptr self, stage_request req) {
  return [self, req] {
    auto now = self->state.rec;
    if (now.staging_path == req.staging_path) {
      finish(self);
      return;
    }
    auto path = req.staging_path;
    call_backend(self, "unstage", [now, path](backend& b) { return b.sweep_staging(now, path); },
                 [self, name = now.name](caf::error err) {
                   log_undo(name, "a late stage")(err);
                   finish(self);
                 });
  };
}

/// A publish that lands after its timeout is unpublished, unless the record says
/// the volume is published there.
late_undo undo_late_publish(self_ptr self, std::string target) {
  return [self, target] {
    auto rec = self->state.rec;
    if (rec.published.count(target) > 0) {
      finish(self);
      return;
    }
    // The record lacks the target, so the backend unmounts only this volume's
    // bind there and deletes nothing (it cannot know the publish made the target).
    call_backend(self, "unpublish", [rec, target](backend& b) { return b.unpublish(rec, target); },
                 [self, rec](caf::error err) {
                   log_undo(rec.name, "a late publish")(err);
                   finish(self);
                 });
  };
}

} // namespace

void run_csi_create(self_ptr self, pending_op op) {
  auto& st = self->state;
  if (st.exists) {
    if (auto err = check_csi_recreate(st.rec, op.spec)) {
      refuse(self, op, err);
      return;
    }
    op.rp.deliver(st.rec);
    finish(self);
    return;
  }
  auto& storage = *st.env.storage;
  if (op.spec.backend != storage.name()) {
    // The name's actor was spawned for another backend by a concurrent create.
    refuse(self, op, make_error(ec::already_exists, st.rec.name + " is being created on backend "
                                                      + storage.name() + ", not "
                                                      + op.spec.backend));
    return;
  }
  if ((op.spec.kind == kind_snapshot || !op.spec.source.empty()) && !storage.copies_content()) {
    refuse(self, op, make_error(ec::unsupported, "backend " + storage.name()
                                                   + " cannot take snapshots or copy a content "
                                                     "source (" + st.rec.name + ")"));
    return;
  }
  auto spec = with_source_size(op.spec);
  if (!spec) {
    refuse(self, op, spec.error());
    return;
  }
  if (auto err = storage.validate(st.rec.name, spec->parameters)) {
    refuse(self, op, err);
    return;
  }
  uint64_t capacity = spec->source_bytes;
  if (spec->kind == kind_volume) {
    auto chosen = storage.choose_capacity(*spec);
    if (!chosen) {
      refuse(self, op, chosen.error());
      return;
    }
    capacity = *chosen;
  }
  auto next = make_csi_record(st.rec.name, *spec, capacity);
  auto reply = next;
  create_and_commit(self, std::move(next), std::move(op), std::move(reply));
}

void run_stage(self_ptr self, pending_op op) {
  auto rec = self->state.rec;
  auto action = check_stage(rec, op.stage);
  if (settled(self, op, action, atom::ok_v)) {
    return;
  }
  auto req = op.stage;
  call_backend(self, "stage", [rec, req](backend& b) { return to_result(b.stage(rec, req)); },
               [self, rec, req, op](caf::error err, caf::message dev) mutable {
    if (err) {
      spdlog::error("volume {}: stage at {} failed: {}", rec.name, req.staging_path,
                    describe(err));
      refuse(self, op, err);
      return;
    }
    auto next = rec;
    set_staged(next, req, value_of<std::string>(dev));
    persist(self, next, [self, next, op](caf::error perr) mutable {
      if (perr) {
        spdlog::error("volume {}: stage not saved, unstaging again: {}", next.name,
                      describe(perr));
        call_backend(self, "unstage", [next](backend& b) { return b.unstage(next); },
                     [self, op, perr, next](caf::error uerr) mutable {
                       log_undo(next.name, "stage")(uerr);
                       refuse(self, op, perr);
                     });
        return;
      }
      self->state.rec = next;
      spdlog::info("volume {} staged at {} ({}{})", next.name, next.staging_path,
                   next.staged_block ? "block" : "mount", next.device.empty() ? "" : ", " + next.device);
      op.rp.deliver(atom::ok_v);
      finish(self);
    });
  }, undo_late_stage(self, req));
}

/// NodeUnstageVolume at a path where the record does not stage the volume: OK
/// (idempotent). A crash between a stage and its commit may have left this
/// volume's mount there, so the backend sweeps the path: it unmounts only what
/// comes from this volume and leaves anything else alone. The record does not
/// change.
void sweep_unrecorded_staging(self_ptr self, pending_op op) {
  auto rec = self->state.rec;
  auto path = op.id;
  call_backend(self, "unstage", [rec, path](backend& b) { return b.sweep_staging(rec, path); },
               [self, rec, path, op](caf::error err) mutable {
                 if (err && !is_unsupported(err)) {
                   spdlog::error("volume {}: cleaning {} failed: {}", rec.name, path,
                                 describe(err));
                   refuse(self, op, err);
                   return;
                 }
                 op.rp.deliver(atom::ok_v);
                 finish(self);
               });
}

void run_unstage(self_ptr self, pending_op op) {
  auto before = self->state.rec;
  auto action = check_unstage(before, op.id);
  if (action && *action == csi_action::done && before.kind == kind_volume) {
    sweep_unrecorded_staging(self, std::move(op));
    return;
  }
  if (settled(self, op, action, atom::ok_v)) {
    return;
  }
  call_backend(self, "unstage", [before](backend& b) { return b.unstage(before); },
               [self, before, op](caf::error err) mutable {
    if (err) {
      spdlog::error("volume {}: unstage of {} failed: {}", before.name, before.staging_path,
                    describe(err));
      refuse(self, op, err);
      return;
    }
    auto next = before;
    set_unstaged(next);
    persist(self, next, [self, next, before, op](caf::error perr) mutable {
      if (perr) {
        spdlog::error("volume {}: unstage not saved, staging again: {}", next.name,
                      describe(perr));
        auto req = staged_as(before);
        call_backend(self, "stage",
                     [before, req](backend& b) { return to_result(b.stage(before, req)); },
                     [self, op, perr, before](caf::error serr, caf::message) mutable {
                       log_undo(before.name, "unstage")(serr);
                       refuse(self, op, perr);
                     });
        return;
      }
      self->state.rec = next;
      spdlog::info("volume {} unstaged from {}", next.name, before.staging_path);
      op.rp.deliver(atom::ok_v);
      finish(self);
    });
  });
}

void run_publish(self_ptr self, pending_op op) {
  auto rec = self->state.rec;
  auto action = check_publish(rec, op.pub);
  if (settled(self, op, action, atom::ok_v)) {
    return;
  }
  auto pub = op.pub;
  call_backend(self, "publish",
               [rec, pub](backend& b) { return to_result(b.publish(rec, pub.target, pub.how)); },
               [self, rec, pub, op](caf::error err, caf::message created) mutable {
    if (err) {
      spdlog::error("volume {}: publish at {} failed: {}", rec.name, pub.target, describe(err));
      refuse(self, op, err);
      return;
    }
    auto next = rec;
    auto& how = next.published[pub.target];
    how = pub.how;
    how.created = value_of<bool>(created); // unpublish deletes only what berth made
    persist(self, next, [self, next, pub, op](caf::error perr) mutable {
      if (perr) {
        spdlog::error("volume {}: publish not saved, unpublishing again: {}", next.name,
                      describe(perr));
        call_backend(self, "unpublish",
                     [next, pub](backend& b) { return b.unpublish(next, pub.target); },
                     [self, op, perr, next](caf::error uerr) mutable {
                       log_undo(next.name, "publish")(uerr);
                       refuse(self, op, perr);
                     });
        return;
      }
      self->state.rec = next;
      spdlog::info("volume {} published at {} ({} targets)", next.name, pub.target,
                   next.published.size());
      op.rp.deliver(atom::ok_v);
      finish(self);
    });
  }, undo_late_publish(self, pub.target));
}

/// NodeUnpublishVolume of a target the record lacks: OK (idempotent). A crash
/// between a publish and its commit may have left this volume's bind there, so
/// the backend unmounts what comes from this volume (and, the record lacking
/// the target, deletes nothing). The record does not change.
void sweep_unrecorded_target(self_ptr self, pending_op op) {
  auto rec = self->state.rec;
  auto target = op.id;
  call_backend(self, "unpublish",
               [rec, target](backend& b) { return b.unpublish(rec, target); },
               [self, rec, target, op](caf::error err) mutable {
                 if (err && !is_unsupported(err)) {
                   spdlog::error("volume {}: cleaning {} failed: {}", rec.name, target,
                                 describe(err));
                   refuse(self, op, err);
                   return;
                 }
                 op.rp.deliver(atom::ok_v);
                 finish(self);
               });
}

void run_unpublish(self_ptr self, pending_op op) {
  auto before = self->state.rec;
  auto target = op.id;
  if (check_unpublish(before, target) == csi_action::done) {
    if (before.kind == kind_volume) {
      sweep_unrecorded_target(self, std::move(op));
      return;
    }
    op.rp.deliver(atom::ok_v);
    finish(self);
    return;
  }
  call_backend(self, "unpublish",
               [before, target](backend& b) { return b.unpublish(before, target); },
               [self, before, target, op](caf::error err) mutable {
    if (err) {
      spdlog::error("volume {}: unpublish of {} failed: {}", before.name, target, describe(err));
      refuse(self, op, err);
      return;
    }
    auto next = before;
    next.published.erase(target);
    persist(self, next, [self, next, before, target, op](caf::error perr) mutable {
      if (perr) {
        spdlog::error("volume {}: unpublish not saved, publishing again: {}", next.name,
                      describe(perr));
        auto how = before.published.at(target);
        call_backend(self, "publish",
                     [before, target, how](backend& b) {
                       return to_result(b.publish(before, target, how));
                     },
                     [self, op, perr, before](caf::error uerr, caf::message) mutable {
                       log_undo(before.name, "unpublish")(uerr);
                       refuse(self, op, perr);
                     });
        return;
      }
      self->state.rec = next;
      spdlog::info("volume {} unpublished from {} ({} targets left)", next.name, target,
                   next.published.size());
      op.rp.deliver(atom::ok_v);
      finish(self);
    });
  });
}

void run_expand(self_ptr self, pending_op op) {
  auto& st = self->state;
  auto rec = st.rec;
  volume_spec want;
  want.backend = rec.backend;
  want.parameters = rec.options;
  want.required_bytes = op.bytes;
  auto rounded = st.env.storage->choose_capacity(want);
  if (!rounded) {
    refuse(self, op, rounded.error());
    return;
  }
  auto bytes = *rounded;
  auto action = check_expand(rec, bytes);
  if (settled(self, op, action, rec.capacity_bytes)) {
    return;
  }
  call_backend(self, "expand", [rec, bytes](backend& b) { return b.expand(rec, bytes); },
               [self, rec, bytes, op](caf::error err) mutable {
    if (err) {
      spdlog::error("volume {}: expand to {} bytes failed: {}", rec.name, bytes, describe(err));
      refuse(self, op, err);
      return;
    }
    auto next = rec;
    next.capacity_bytes = bytes;
    // A grown image cannot be shrunk back; a failed persist leaves it larger than
    // its record, and the retried expand (idempotent in the backend) settles it.
    persist_and_reply(self, next, op, bytes, [self, rec, bytes] {
      spdlog::info("volume {} expanded from {} to {} bytes", rec.name, rec.capacity_bytes, bytes);
    });
  });
}

void run_grow(self_ptr self, pending_op op) {
  auto rec = self->state.rec;
  if (auto err = check_volume_path(rec, op.id)) {
    refuse(self, op, err);
    return;
  }
  call_backend(self, "grow", [rec](backend& b) { return to_result(b.grow_filesystem(rec)); },
               [self, rec, op](caf::error err, caf::message size) mutable {
    if (err) {
      spdlog::error("volume {}: growing the filesystem failed: {}", rec.name, describe(err));
      refuse(self, op, err);
      return;
    }
    auto bytes = value_of<uint64_t>(size);
    spdlog::info("volume {}: filesystem at {} grown to {} bytes", rec.name, rec.staging_path,
                 bytes);
    op.rp.deliver(bytes);
    finish(self);
  });
}

void run_stats(self_ptr self, pending_op op) {
  auto rec = self->state.rec;
  auto path = op.id;
  if (auto err = check_volume_path(rec, path)) {
    refuse(self, op, err);
    return;
  }
  call_backend(self, "stats", [rec, path](backend& b) { return to_result(b.stats(rec, path)); },
               [self, op](caf::error err, caf::message stats) mutable {
    if (err) {
      refuse(self, op, err);
      return;
    }
    op.rp.deliver(value_of<volume_stats>(stats));
    finish(self);
  });
}

} // namespace berth::detail
