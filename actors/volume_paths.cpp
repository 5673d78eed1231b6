// Publishes and unpublishes that share a turn (docs/design.md, "Publishes share a
// turn"): the ones waiting in a row behind a running one, each of another node path,
// run with it as one transition:
//
//   check each on the record ─▶ one backend call: each change in order ─▶ one save of
//   every change that succeeded ─▶ each caller its own outcome
//        │ done or refused: answered now            │ not saved: all undone, all get the error
//
// Each request stays all or nothing: a change that failed is not in the record, and its
// caller alone gets its error. A volume under load from many pods (one per target)
// then costs one call and one fsync per turn instead of one per request.

#include <spdlog/spdlog.h>

#include "actors/csi_rules.hpp"
#include "actors/detail/transitions.hpp"

namespace berth::detail {

namespace {

/// What one member of the turn does on the host.
enum class path_op {
  publish,   ///< bind-mounts the staging path at the target
  unpublish, ///< takes the recorded publication away
  sweep,     ///< unmounts this volume's mount at a target the record lacks (a crash
             ///< between a publish and its commit may have left one); the record stays
};

/// One member of the turn: its step (caller and answers) and what it does.
struct member {
  queued_step step;
  path_op op;
  std::string target;
  publication how; ///< publish: the new one; unpublish: the recorded one (for an undo)
};

/// What the backend call reports for each member, in order.
struct path_result {
  caf::error err;
  bool created = false; ///< publish: it made the target (unpublish deletes only that)
};
using path_results = std::vector<path_result>;

/// Checks each step on the record as the ones before it leave it (so the target limit
/// counts them): answers the ones already done or refused, and returns the rest.
std::vector<member> members_of(std::vector<queued_step> steps, const volume_record& before) {
  std::vector<member> out;
  auto projected = before;
  for (auto& step : steps) {
    auto change = *step.change; // a copy: moving the step into a member empties it
    if (change.publish) {
      auto action = check_publish(projected, *change.publish);
      if (!action) {
        step.refuse(action.error());
      } else if (*action == csi_action::done) {
        step.acknowledge();
      } else {
        projected.published[change.target] = change.publish->how;
        out.push_back({std::move(step), path_op::publish, change.target, change.publish->how});
      }
    } else if (auto action = check_unpublish(projected, change.target); action == csi_action::run) {
      auto how = projected.published.at(change.target);
      projected.published.erase(change.target);
      out.push_back({std::move(step), path_op::unpublish, change.target, how});
    } else if (action == csi_action::sweep) {
      out.push_back({std::move(step), path_op::sweep, change.target, {}});
    } else {
      step.acknowledge();
    }
  }
  return out;
}

/// The plan of the backend call: what each member does, without its caller.
struct planned {
  path_op op;
  std::string target;
  publication how;
};

/// Makes each change in order on the host, with the record as it was before the turn.
path_results make_changes(backend& b, const volume_record& before,
                          const std::vector<planned>& plan) {
  path_results out(plan.size());
  for (size_t i = 0; i < plan.size(); ++i) {
    auto& p = plan[i];
    if (p.op == path_op::publish) {
      auto made = b.publish(before, p.target, p.how);
      if (made) {
        out[i].created = *made;
      } else {
        out[i].err = made.error();
      }
      continue;
    }
    out[i].err = b.unpublish(before, p.target);
    if (p.op == path_op::sweep && is(out[i].err, ec::unsupported)) {
      out[i].err = {}; // a backend without it has nothing of its own there
    }
  }
  return out;
}

/// Undoes the changes that succeeded, last first, when their record was not saved.
caf::error undo_changes(backend& b, const volume_record& before, const volume_record& unsaved,
                        const std::vector<planned>& plan, const path_results& results) {
  caf::error first;
  for (size_t i = plan.size(); i-- > 0;) {
    auto& p = plan[i];
    if (results[i].err || p.op == path_op::sweep) {
      continue;
    }
    // The unsaved record knows which targets the publish made, so only those go.
    caf::error err;
    if (p.op == path_op::publish) {
      err = b.unpublish(unsaved, p.target);
    } else if (auto made = b.publish(before, p.target, p.how); !made) {
      err = std::move(made.error());
    }
    if (err && !first) {
      first = std::move(err);
    }
  }
  return first;
}

/// A turn that lands after its timeout: the publishes the record lacks are taken away
/// again, and the unpublishes the record still holds are made good by a
/// reconciliation (it publishes again what the record holds and the host lost).
late_settle undo_late_changes(const std::vector<planned>& plan) {
  return while_present([plan](const volume_record& now) {
    std::vector<std::string> stray;
    bool unpublished = false;
    for (auto& p : plan) {
      if (p.op == path_op::publish && now.published.count(p.target) == 0) {
        stray.push_back(p.target);
      }
      unpublished = unpublished || p.op == path_op::unpublish;
    }
    settlement s;
    if (!stray.empty()) {
      s = undo_late("late publishes",
                    on_backend(backend_call::path_changes, [now, stray](backend& b) {
                      caf::error first;
                      for (auto& target : stray) {
                        if (auto err = b.unpublish(now, target); err && !first) {
                          first = std::move(err);
                        }
                      }
                      return first;
                    }).plan);
    }
    s.reconcile = unpublished;
    return s;
  });
}

/// "published at /a, /b; unpublished from /c" for the changes that succeeded.
std::string summary(const std::vector<planned>& plan, const path_results& results) {
  std::string published;
  std::string unpublished;
  for (size_t i = 0; i < plan.size(); ++i) {
    if (results[i].err || plan[i].op == path_op::sweep) {
      continue;
    }
    auto& list = plan[i].op == path_op::publish ? published : unpublished;
    list += (list.empty() ? "" : ", ") + plan[i].target;
  }
  std::string out;
  if (!published.empty()) {
    out = "published at " + published;
  }
  if (!unpublished.empty()) {
    out += (out.empty() ? "" : "; ") + std::string{"unpublished from "} + unpublished;
  }
  return out;
}

/// Answers each member with its own result, logging each change that failed.
void answer_each(self_ptr self, std::vector<member>& members, const path_results& results) {
  for (size_t i = 0; i < members.size(); ++i) {
    auto& err = results[i].err;
    if (!err) {
      members[i].step.acknowledge();
      continue;
    }
    log_failed(self->state, members[i].step.what, err);
    members[i].step.refuse(err);
  }
}

} // namespace

void run_path_changes(self_ptr self, std::vector<queued_step> steps) {
  auto before = *self->state.rec();
  auto members = std::make_shared<std::vector<member>>(members_of(std::move(steps), before));
  if (members->empty()) {
    finish(self);
    return;
  }
  std::vector<planned> plan;
  for (auto& m : *members) {
    plan.push_back({m.op, m.target, m.how});
  }
  transition<path_results> t;
  t.what = "publish and unpublish of " + std::to_string(plan.size()) + " targets";
  t.work = on_backend(
    backend_call::path_changes,
    [before, plan](backend& b) -> caf::expected<path_results> {
      return make_changes(b, before, plan);
    },
    undo_late_changes(plan));
  t.change = record_change::save_if_changed; // every change failed: nothing to save
  // What the work reported, for the undo when the record it leads to is not saved.
  auto reported = std::make_shared<path_results>();
  t.apply = [plan, reported](const volume_record& rec, const path_results& results) {
    *reported = results;
    auto next = rec;
    for (size_t i = 0; i < plan.size(); ++i) {
      if (results[i].err) {
        continue;
      }
      if (plan[i].op == path_op::publish) {
        auto& entry = next.published[plan[i].target];
        entry = plan[i].how;
        entry.created = results[i].created; // unpublish deletes only what berth made
      } else if (plan[i].op == path_op::unpublish) {
        next.published.erase(plan[i].target);
      }
    }
    return next;
  };
  t.undo = [before, plan, reported](const volume_record& unsaved) {
    return on_backend(backend_call::path_changes,
                      [before, unsaved, plan, results = *reported](backend& b) {
                        return undo_changes(b, before, unsaved, plan, results);
                      })
      .plan;
  };
  t.undoing = "undoing the changes that succeeded";
  t.committed = [plan](const volume_record& next, const path_results& results) {
    auto changes = summary(plan, results);
    return changes.empty() ? std::string{}
                           : "volume " + next.name + " " + changes + " ("
        + std::to_string(next.published.size()) + " targets)";
  };
  transact<path_results>(self, std::move(t), [self, members](caf::expected<path_results> out) {
    if (out) {
      answer_each(self, *members, *out);
      return;
    }
    for (auto& m : *members) {
      m.step.refuse(out.error());
    }
  });
}

} // namespace berth::detail
