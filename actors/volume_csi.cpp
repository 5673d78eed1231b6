// The CSI transitions of one volume, each a description the engine runs
// (detail/engine.hpp), all or nothing:
//
//   check (csi_rules) ─▶ transact: backend call ─▶ persist ─▶ commit ─▶ reply
//        │ done: reply at once                            │ fails: undo, reply
//
// Stage and publish change the record and are persisted; grow, stats and the
// sweep of a path the record does not hold change no record (record_change::none:
// nothing is saved), but they are transitions all the same and take their turn,
// so they never race one. Expand and modify go through the coalescing mailbox
// (volume_mailbox.cpp).

#include <spdlog/spdlog.h>

#include "actors/csi_rules.hpp"
#include "actors/detail/transitions.hpp"

namespace berth::detail {

namespace {

/// Ends a step that its check settled: refused, or already done (`reply`).
/// Returns false when the transition must run.
template <class R, class Reply>
bool settled(self_ptr self, promise<R>& rp, const caf::expected<csi_action>& action, Reply reply) {
  if (!action) {
    answer(self, rp, action.error());
    return true;
  }
  if (*action == csi_action::done) {
    answer(self, rp, std::move(reply));
    return true;
  }
  return false;
}

/// A stage that lands after its timeout is swept, unless the record says the
/// volume is staged there (a retry got it meanwhile). The sweep gets the record
/// as it is now: the backend detaches the device only when that record stages
/// the volume nowhere, so a newer stage elsewhere keeps its device.
late_settle undo_late_stage(const std::string& path) {
  return while_present([path](const volume_record& now) {
    if (now.staging_path == path) {
      return settlement{};
    }
    return undo_late("a late stage", on_backend(backend_call::unstage, [now, path](backend& b) {
                                       return b.sweep_staging(now, path);
                                     }).plan);
  });
}

/// A publish that lands after its timeout is unpublished, unless the record says
/// the volume is published there.
late_settle undo_late_publish(const std::string& target) {
  return while_present([target](const volume_record& rec) {
    if (rec.published.count(target) > 0) {
      return settlement{};
    }
    // The record lacks the target, so the backend unmounts only this volume's
    // bind there and deletes nothing (it cannot know the publish made the target).
    return undo_late("a late publish",
                     on_backend(backend_call::unpublish, [rec, target](backend& b) {
                       return b.unpublish(rec, target);
                     }).plan);
  });
}

/// A node path the record does not hold (a crash between a side effect and its
/// commit may have left this volume's mount there): `sweep` unmounts only what
/// comes from this volume and deletes nothing. OK either way; the record does
/// not change.
void sweep_unrecorded(self_ptr self, promise<atom::ok> rp, backend_call call,
                      const std::string& path, std::function<caf::error(backend&)> sweep) {
  transition<none> t;
  t.what = std::string{words_of(call)} + " of unrecorded " + path;
  t.work = on_backend(call, std::move(sweep));
  // A backend without the call has nothing of its own to clean there.
  t.work.plan.call->unsupported_is_done = true;
  t.change = record_change::none; // the record never held the path
  t.failed = "cleaning " + path + " failed";
  transact(self, rp, std::move(t), reply_ok);
}

/// An undo that redoes a stage or a publish: `redo`'s work, its result unread.
template <class T>
undo_fn undo_by(const work_of<T>& redo) {
  return [plan = redo.plan](const volume_record&) { return plan; };
}

} // namespace

void run_csi_create(self_ptr self, promise<volume_record> rp, volume_spec spec) {
  auto& st = self->state;
  if (st.rec().exists()) {
    if (auto err = check_csi_recreate(*st.rec(), spec)) {
      answer(self, rp, err);
      return;
    }
    answer(self, rp, *st.rec());
    return;
  }
  auto& storage = *st.env.storage;
  if (spec.backend != storage.name()) {
    // The name's actor was spawned for another backend by a concurrent create.
    answer(self, rp,
           make_error(ec::already_exists,
                      st.rec()->name + " is being created on backend " + storage.name() + ", not "
                        + spec.backend));
    return;
  }
  if ((spec.kind == record_kind::snapshot || !spec.source.empty()) && !storage.copies_content()) {
    answer(self, rp,
           make_error(ec::unsupported,
                      "backend " + storage.name()
                        + " cannot take snapshots or copy a content "
                          "source ("
                        + st.rec()->name + ")"));
    return;
  }
  auto sized = with_source_size(std::move(spec));
  if (!sized) {
    answer(self, rp, sized.error());
    return;
  }
  if (auto err = storage.validate(st.rec()->name, sized->parameters)) {
    answer(self, rp, err);
    return;
  }
  if (auto err = storage.validate_mutable(st.rec()->name, sized->mutable_parameters)) {
    answer(self, rp, err);
    return;
  }
  uint64_t capacity = sized->source_bytes;
  if (sized->kind == record_kind::volume) {
    auto chosen = storage.choose_capacity(*sized);
    if (!chosen) {
      answer(self, rp, chosen.error());
      return;
    }
    capacity = *chosen;
  }
  auto next = make_csi_record(st.rec()->name, *sized, capacity);
  transact(self, rp, creation(next),
           [](const std::string&, const volume_record& rec) { return rec; });
}

void run_stage(self_ptr self, promise<atom::ok> rp, stage_request req) {
  auto rec = *self->state.rec();
  if (settled(self, rp, check_stage(rec, req), atom::ok_v)) {
    return;
  }
  transition<std::string> t;
  t.what = "stage at " + req.staging_path;
  t.work = on_backend(
    backend_call::stage, [rec, req](backend& b) { return b.stage(rec, req); },
    undo_late_stage(req.staging_path));
  t.apply = [req](const volume_record& before, const std::string& device) {
    auto next = before;
    set_staged(next, req, device);
    return next;
  };
  t.undo = [](const volume_record& unsaved) {
    return on_backend(backend_call::unstage, [unsaved](backend& b) { return b.unstage(unsaved); })
      .plan;
  };
  t.undoing = "unstaging again";
  t.committed = [](const volume_record& next, const std::string&) {
    return "volume " + next.name + " staged at " + next.staging_path + " ("
           + (next.staged_block ? "block" : "mount")
           + (next.device.empty() ? "" : ", " + next.device) + ")";
  };
  transact(self, rp, std::move(t), reply_ok);
}

void run_unstage(self_ptr self, promise<atom::ok> rp, std::string path) {
  auto before = *self->state.rec();
  auto action = check_unstage(before, path);
  if (action && *action == csi_action::sweep) {
    sweep_unrecorded(self, rp, backend_call::unstage, path,
                     [before, path](backend& b) { return b.sweep_staging(before, path); });
    return;
  }
  if (settled(self, rp, action, atom::ok_v)) {
    return;
  }
  transition<none> t;
  t.what = "unstage of " + before.staging_path;
  t.work = on_backend(backend_call::unstage, [before](backend& b) { return b.unstage(before); });
  t.apply = [](const volume_record& rec, none) {
    auto next = rec;
    set_unstaged(next);
    return next;
  };
  auto req = staged_as(before);
  t.undo = undo_by(
    on_backend(backend_call::stage, [before, req](backend& b) { return b.stage(before, req); }));
  t.undoing = "staging again";
  t.committed = [path = before.staging_path](const volume_record& next, none) {
    return "volume " + next.name + " unstaged from " + path;
  };
  transact(self, rp, std::move(t), reply_ok);
}

void run_publish(self_ptr self, promise<atom::ok> rp, publish_request req) {
  auto rec = *self->state.rec();
  if (settled(self, rp, check_publish(rec, req), atom::ok_v)) {
    return;
  }
  auto target = req.target;
  auto how = req.how;
  transition<bool> t;
  t.what = "publish at " + target;
  t.work = on_backend(
    backend_call::publish, [rec, target, how](backend& b) { return b.publish(rec, target, how); },
    undo_late_publish(target));
  t.apply = [target, how](const volume_record& before, const bool& created) {
    auto next = before;
    auto& entry = next.published[target];
    entry = how;
    entry.created = created; // unpublish deletes only what berth made
    return next;
  };
  t.undo = [target](const volume_record& unsaved) {
    return on_backend(backend_call::unpublish,
                      [unsaved, target](backend& b) { return b.unpublish(unsaved, target); })
      .plan;
  };
  t.undoing = "unpublishing again";
  t.committed = [target](const volume_record& next, const bool&) {
    return "volume " + next.name + " published at " + target + " ("
           + std::to_string(next.published.size()) + " targets)";
  };
  transact(self, rp, std::move(t), reply_ok);
}

void run_unpublish(self_ptr self, promise<atom::ok> rp, std::string target) {
  auto before = *self->state.rec();
  switch (check_unpublish(before, target)) {
    case csi_action::done: answer(self, rp, atom::ok_v); return;
    case csi_action::sweep:
      sweep_unrecorded(self, rp, backend_call::unpublish, target,
                       [before, target](backend& b) { return b.unpublish(before, target); });
      return;
    case csi_action::run: break;
  }
  transition<none> t;
  t.what = "unpublish of " + target;
  t.work = on_backend(backend_call::unpublish,
                      [before, target](backend& b) { return b.unpublish(before, target); });
  t.apply = [target](const volume_record& rec, none) {
    auto next = rec;
    next.published.erase(target);
    return next;
  };
  auto how = before.published.at(target);
  t.undo = undo_by(on_backend(backend_call::publish, [before, target, how](backend& b) {
    return b.publish(before, target, how);
  }));
  t.undoing = "publishing again";
  t.committed = [target](const volume_record& next, none) {
    return "volume " + next.name + " unpublished from " + target + " ("
           + std::to_string(next.published.size()) + " targets left)";
  };
  transact(self, rp, std::move(t), reply_ok);
}

void run_grow(self_ptr self, promise<uint64_t> rp, std::string path) {
  auto rec = *self->state.rec();
  if (auto err = check_volume_path(rec, path)) {
    answer(self, rp, err);
    return;
  }
  transition<uint64_t> t;
  t.what = "grow at " + path;
  t.work =
    on_backend(backend_call::node_expand, [rec](backend& b) { return b.grow_filesystem(rec); });
  t.change = record_change::none; // the modify that grew the image recorded the capacity
  t.failed = "growing the filesystem failed";
  t.committed = [](const volume_record& rec, const uint64_t& bytes) {
    return "volume " + rec.name + ": filesystem at " + rec.staging_path + " grown to "
           + std::to_string(bytes) + " bytes";
  };
  transact(self, rp, std::move(t), [](const uint64_t& bytes, const volume_record&) {
    return bytes;
  });
}

void run_stats(self_ptr self, promise<volume_stats> rp, std::string path) {
  auto rec = *self->state.rec();
  if (auto err = check_volume_path(rec, path)) {
    answer(self, rp, err);
    return;
  }
  transition<volume_stats> t;
  t.what = "stats at " + path;
  t.work = on_backend(backend_call::stats, [rec, path](backend& b) { return b.stats(rec, path); });
  t.change = record_change::none; // it only reads the filesystem
  // The kubelet asks for stats every minute or so and reports a failure itself; a
  // line per poll here would only repeat it. A success logs nothing either.
  t.logs_failures = false;
  transact(self, rp, std::move(t), [](const volume_stats& stats, const volume_record&) {
    return stats;
  });
}

} // namespace berth::detail
