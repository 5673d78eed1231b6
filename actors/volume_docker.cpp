// The Docker transitions of one volume: create, mount and unmount by mount ID
// (counted: docs/design.md, "One count per mount ID"), remove. Each is a description
// the engine runs (detail/engine.hpp); the rules are plain functions (volume_rules).

#include <algorithm>

#include <spdlog/spdlog.h>

#include "actors/detail/transitions.hpp"
#include "actors/volume_rules.hpp"
#include "core/docker_source.hpp"
#include "core/text.hpp"

namespace berth::detail {

namespace {

std::string describe_creation(const volume_record& rec) {
  std::string out = to_string(rec.kind) + " " + rec.name + " created (backend " + rec.backend;
  if (rec.capacity_bytes != 0) {
    out += ", " + std::to_string(rec.capacity_bytes) + " bytes";
  }
  if (!rec.source.empty()) {
    out += ", from " + rec.source.describe();
  }
  if (!rec.consistency.empty()) {
    out += ", " + rec.consistency + ": copied while in use";
  }
  return out + ")";
}

work_of<std::string> host_mount(const volume_record& rec, late_settle late = {}) {
  return on_backend(
    backend_call::mount, [rec](backend& b) { return b.mount(rec); }, std::move(late));
}

/// A mount that lands after its timeout: its caller was told it failed, so a
/// mount the record lacks is undone.
late_settle undo_late_mount() {
  return while_present([](const volume_record& now) {
    if (now.mounted) {
      return settlement{};
    }
    return undo_late("a late mount", host_unmount(now).plan);
  });
}

} // namespace

transition<std::string> creation(const volume_record& next, const std::string& tree) {
  transition<std::string> t;
  t.what = "create";
  // A snapshot's create is timed as "snapshot" (berth_backend_call_duration_seconds).
  auto call = next.kind == record_kind::snapshot ? backend_call::snapshot : backend_call::create;
  // A copy's backend says how consistent it is; a volume made empty has nothing to say.
  const bool copy = next.kind == record_kind::snapshot || !next.source.empty();
  // Storage made after its caller was told the create timed out is no volume's: it goes
  // again, in turn, before anything else runs on the name.
  late_settle late = [next](const committed_record& now) {
    if (now.exists()) {
      return settlement{};
    }
    return undo_late("a late create", on_backend(backend_call::remove, [next](backend& b) {
                                        return b.remove(next);
                                      }).plan);
  };
  t.work = on_backend(
    call,
    [next, copy, tree](backend& b) -> caf::expected<std::string> {
      if (copy) {
        return b.create_copy(next);
      }
      if (auto err = tree.empty() ? b.create(next) : b.create_from_tree(next, tree)) {
        return err;
      }
      return std::string{};
    },
    std::move(late));
  t.apply = [next](const volume_record&, const std::string& consistency) {
    auto made = next;
    made.consistency = consistency;
    return made;
  };
  t.undo = [](const volume_record& unsaved) {
    return on_backend(backend_call::remove, [unsaved](backend& b) { return b.remove(unsaved); })
      .plan;
  };
  t.undoing = "removing the storage again";
  t.committed = [](const volume_record& rec, const std::string&) {
    return describe_creation(rec);
  };
  t.creates = true;
  return t;
}

void run_create(self_ptr self, promise<atom::ok> rp, option_map options, uint64_t source_bytes,
                std::string tree) {
  auto& st = self->state;
  if (st.rec().exists() && !tree.empty()) {
    answer(self, rp,
           make_error(ec::already_exists,
                      "volume " + st.rec()->name
                        + " exists already: "
                          "an import makes a new volume"));
    return;
  }
  if (st.rec().exists()) {
    if (st.rec()->kind != record_kind::volume || st.rec()->backend != st.env.storage->name()) {
      answer(self, rp,
             make_error(ec::already_exists,
                        to_string(st.rec()->kind) + " " + st.rec()->name
                          + " already exists on backend " + st.rec()->backend));
      return;
    }
    if (auto err = check_recreate(*st.rec(), options)) {
      answer(self, rp, err);
    } else {
      answer(self, rp, atom::ok_v);
    }
    return;
  }
  // Checked by the registry already; asked again for the capacity the options give.
  auto capacity = st.env.storage->validate_docker(st.rec()->name, options);
  if (!capacity) {
    answer(self, rp, capacity.error());
    return;
  }
  auto source = docker_content_source(st.rec()->name, options);
  if (!source) {
    answer(self, rp, source.error());
    return;
  }
  if (*capacity != 0 && *capacity < source_bytes) {
    answer(self, rp,
           make_error(ec::out_of_range,
                      "option size of volume " + st.rec()->name + " gives "
                        + std::to_string(*capacity) + " bytes, less than its source "
                        + source->describe() + " (" + std::to_string(source_bytes)
                        + " bytes): a copy is at least its source's size"));
    return;
  }
  volume_record next;
  next.name = st.rec()->name;
  next.backend = st.env.storage->name();
  next.owner = record_owner::docker;
  next.source = std::move(*source);
  next.capacity_bytes = std::max(*capacity, source_bytes);
  next.options = std::move(options);
  next.created_at = now_rfc3339();
  transact(self, rp, creation(next, tree), reply_ok);
}

void run_mount(self_ptr self, promise<std::string> rp, std::string id, dockerd_key dockerd) {
  auto& st = self->state;
  if (auto err = check_mount(*st.rec(), id)) {
    answer(self, rp, err);
    return;
  }
  auto now = release_clock::now(); // one instant: the host-mount path applies it again below
  auto next = *st.rec();
  auto effect = apply_mount(next, id, dockerd, now);
  if (effect.action == mount_action::count_only) {
    auto line = mount_counted_line(next, id, effect);
    auto mp = next.mountpoint;
    commit(self, rp, std::move(next), mp, line);
    return;
  }
  transition<std::string> t;
  t.what = "mount";
  t.work = host_mount(*st.rec(), undo_late_mount());
  t.apply = [id, dockerd, now](const volume_record& before, const std::string& mp) {
    auto next = before;
    apply_mount(next, id, dockerd, now);
    set_mounted(next, mp);
    return next;
  };
  // All or nothing, across crashes (docs/design.md): the mount is undone before the
  // error leaves.
  t.undo = [](const volume_record& unsaved) { return host_unmount(unsaved).plan; };
  t.undoing = "unmounting again";
  t.committed = [id, replaced = effect.replaced](const volume_record& rec, const std::string& mp) {
    auto it = rec.mounts.find(id);
    auto count = it == rec.mounts.end() ? 0u : it->second;
    return "volume " + rec.name + " mounted at " + mp + " (id " + short_id(id) + ", count "
           + std::to_string(count) + replaced_part(replaced) + ")";
  };
  transact(self, rp, std::move(t), [](const std::string& mp, const volume_record&) { return mp; });
}

transition<none> unmount_last(self_ptr self, std::function<void(volume_record&)> uncount,
                              std::function<std::string(const volume_record&)> line) {
  auto before = *self->state.rec();
  transition<none> t;
  t.what = "unmount";
  t.work = host_unmount(before);
  t.apply = [uncount](const volume_record& rec, none) {
    auto next = rec;
    uncount(next);
    set_unmounted(next);
    return next;
  };
  t.undo = [before](const volume_record&) { return host_mount(before).plan; };
  t.undoing = "mounting again";
  if (line) {
    t.committed = [line](const volume_record& rec, none) { return line(rec); };
  }
  return t;
}

void run_unmount(self_ptr self, promise<atom::ok> rp, std::string id) {
  auto& st = self->state;
  auto next = *st.rec();
  auto action = apply_unmount(next, id);
  if (action == unmount_action::unknown_id) {
    spdlog::info("{}", unknown_unmount_line(next, id));
    answer(self, rp, atom::ok_v);
    return;
  }
  if (action == unmount_action::count_only) {
    auto line = unmount_counted_line(next, id);
    commit(self, rp, std::move(next), atom::ok_v, line);
    return;
  }
  auto t = unmount_last(
    self, [id](volume_record& next) { apply_unmount(next, id); },
    [id](const volume_record& rec) {
      return "volume " + rec.name + " unmounted (id " + short_id(id) + ", count 0)";
    });
  transact(self, rp, std::move(t), reply_ok);
}

namespace {

/// Forgets the volume once its storage is gone (`work` deleted it, or it is gone
/// already): erases the record durably, then the actor holds no volume. `why` ends
/// the log line. A record that cannot be erased stays: a retried Remove finishes it.
transition<none> removal(work_of<none> work, const std::string& why) {
  transition<none> t;
  t.what = "remove";
  t.work = std::move(work);
  t.change = record_change::erase;
  // No undo: deleted storage cannot come back.
  t.failed = "remove failed, the volume stays";
  t.unsaved = "storage deleted, but the removal was not saved";
  t.committed = [why](const volume_record& gone, none) {
    return "volume " + gone.name + " removed" + why;
  };
  return t;
}

/// Deletes the storage first and forgets the name only after (docs/design.md, "Only
/// what berth owns"): a failed or timed-out deletion leaves the volume present, so a
/// re-create can never share a name with storage that is still being deleted. A crash in between
/// leaves a record whose storage is gone; the retried Remove (idempotent) ends it.
void remove_storage(self_ptr self, promise<atom::ok> rp) {
  auto rec = *self->state.rec();
  // A deletion that returns after its timeout is adopted: the storage is gone, so
  // only the record goes, as a transition of its own.
  late_settle adopt = while_present([](const volume_record&) {
    settlement s;
    s.run = plan_of<none>(removal(record_only(), " (its deletion returned after its timeout)"));
    return s;
  });
  auto work = on_backend(
    backend_call::remove, [rec](backend& b) { return b.remove(rec); }, std::move(adopt));
  transact(self, rp, removal(std::move(work), ""), reply_ok);
}

} // namespace

void run_remove(self_ptr self, promise<atom::ok> rp, record_kind kind) {
  auto& st = self->state;
  if (st.rec()->kind != kind) {
    answer(self, rp,
           make_error(ec::not_found,
                      "no " + to_string(kind) + " " + st.rec()->name + " (it is a "
                        + to_string(st.rec()->kind) + ")"));
    return;
  }
  if (auto err = check_remove(*st.rec())) {
    answer(self, rp, err);
    return;
  }
  if (!st.rec()->mounted) {
    remove_storage(self, rp);
    return;
  }
  // Mounted by an older state without counts: unmount first, never rm through a mount.
  // Two transitions in one turn: the unmount is the last Unmount's, saved before the
  // deletion starts (a failed deletion leaves a record that says what the host has;
  // an unmount that cannot be saved is mounted again, and nothing is deleted).
  spdlog::info("volume {}: still mounted without mount IDs, unmounting before remove",
               st.rec()->name);
  auto unmount = unmount_last(self, [](volume_record&) {}, {}); // no ID to uncount, no line
  transact_then<none>(self, std::move(unmount),
                      [self, rp](caf::expected<none> out, ending) mutable {
                        if (!out) {
                          answer(self, rp, out.error());
                          return;
                        }
                        remove_storage(self, rp);
                      });
}

} // namespace berth::detail
