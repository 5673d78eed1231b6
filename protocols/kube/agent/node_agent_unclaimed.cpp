// The node agent's unclaimed volumes: the CSI volumes recorded on this node that no
// BerthVolume names (and, from its snapshot agent, the CSI snapshots no BerthSnapshot
// names). Reported after each full LIST (log, berth_unclaimed_volumes, berthctl unclaimed),
// never removed on their own: their data may be all that is left of a volume whose object
// was lost. An operator removes one, and only once the API server confirms that no object
// of this node names it (docs/running.md, "Unclaimed volumes").

#include "protocols/kube/agent/node_agent.hpp"

#include <algorithm>
#include <set>

#include <spdlog/spdlog.h>

#include "core/errors.hpp"
#include "core/text.hpp"
#include "protocols/kube/agent/agent_bounds.hpp"

namespace berth::kube::agent {

using detail::call_bound;
using detail::clock_type;

namespace {

caf::error claimed_by(const std::string& object, const std::string& csi_name,
                      const std::string& node) {
  return make_error(ec::failed_precondition,
                    "BerthVolume " + object + " names volume " + quote_input(csi_name)
                      + " on node " + node + ": it is not unclaimed; delete its "
                      "PersistentVolume (or the BerthVolume) instead");
}

caf::error snapshot_claimed_by(const std::string& object, const std::string& csi_name,
                               const std::string& node) {
  return make_error(ec::failed_precondition,
                    "BerthSnapshot " + object + " names snapshot " + quote_input(csi_name)
                      + " on node " + node + ": it is not unclaimed; delete its "
                      "VolumeSnapshot (or the BerthSnapshot) instead");
}

/// The answer to a removal that reaches a stopping agent.
caf::error stopping_refusal(const std::string& name) {
  return make_error(ec::unavailable, "berthd is stopping: volume " + quote_input(name)
                                       + " was not removed; ask again once it runs");
}

} // namespace

void node_agent::report_unclaimed(const std::vector<std::string>& names_seen) {
  auto mine = desk_.volumes();
  if (!mine) {
    spdlog::warn("node agent: cannot list the CSI volumes of node {} to find the unclaimed "
                 "ones: {}", cfg_.node, describe(mine.error()));
    return;
  }
  std::lock_guard lock{mu_};
  std::set<std::string> claimed;
  for (const auto& name : names_seen) {
    auto it = volumes_.find(name);
    if (it != volumes_.end() && it->second.latest) {
      claimed.insert(it->second.latest->spec.csi_name);
    }
  }
  unclaimed_volumes now;
  now.listed_at = std::chrono::system_clock::now();
  for (const auto& rec : *mine) {
    if (claimed.count(rec.name)) {
      continue;
    }
    now.names.push_back(rec.name);
    bool known = unclaimed_ && std::binary_search(unclaimed_->names.begin(),
                                                  unclaimed_->names.end(), rec.name);
    if (!known) {
      spdlog::warn("node agent: CSI volume {} is recorded on node {} but no BerthVolume names "
                   "it; berth keeps it and never removes it by itself (berthctl unclaimed "
                   "lists it, berthctl unclaimed rm removes it)",
                   quote_input(rec.name), cfg_.node);
    }
  }
  std::sort(now.names.begin(), now.names.end());
  unclaimed_ = std::move(now);
  count_unclaimed_locked();
}

void node_agent::claim_locked(const std::string& csi_name) {
  if (drop_unclaimed_locked(csi_name)) {
    spdlog::info("node agent: CSI volume {} is claimed by a BerthVolume again",
                 quote_input(csi_name));
  }
}

bool node_agent::drop_unclaimed_locked(const std::string& csi_name) {
  if (!unclaimed_) {
    return false;
  }
  auto& names = unclaimed_->names;
  auto it = std::lower_bound(names.begin(), names.end(), csi_name);
  if (it == names.end() || *it != csi_name) {
    return false;
  }
  names.erase(it);
  count_unclaimed_locked();
  return true;
}

void node_agent::count_unclaimed_locked() {
  if (!cfg_.stats) {
    return;
  }
  auto snapshots = snapshots_.unclaimed();
  size_t n = (unclaimed_ ? unclaimed_->names.size() : 0) + (snapshots ? snapshots->size() : 0);
  if (unclaimed_ || snapshots) {
    cfg_.stats->unclaimed_volumes.set(static_cast<int64_t>(n));
  }
}

caf::expected<unclaimed_volumes> node_agent::unclaimed() {
  auto snapshots = snapshots_.unclaimed();
  std::lock_guard lock{mu_};
  if (!unclaimed_ || !snapshots) {
    return make_error(ec::unavailable, "the node agent has not listed the BerthVolumes and "
                                       "BerthSnapshots of node " + cfg_.node
                                         + " yet: ask again once it has");
  }
  auto out = *unclaimed_;
  out.snapshots = std::move(*snapshots);
  return out;
}

void node_agent::remove_unclaimed(std::string name, removed_fn done) {
  {
    std::lock_guard lock{mu_};
    if (!stopping_) {
      removals_.push_back({std::move(name), std::move(done)});
      wake_.notify_all();
      return;
    }
  }
  done(stopping_refusal(name));
}

void node_agent::refuse_removals_left() {
  std::deque<removal> left;
  {
    std::lock_guard lock{mu_};
    left.swap(removals_);
  }
  for (auto& r : left) {
    r.done(stopping_refusal(r.name));
  }
}

caf::error node_agent::remove_unclaimed_now(const std::string& name) {
  auto rec = desk_.get(name);
  if (!rec) {
    return rec.error();
  }
  if (!*rec) {
    auto snap = desk_.get_snapshot(name);
    if (!snap) {
      return snap.error();
    }
    if (*snap) {
      return remove_unclaimed_snapshot(name);
    }
    return make_error(ec::not_found, "no CSI volume or snapshot " + quote_input(name)
                                       + " on node " + cfg_.node);
  }
  // Claimed by an object this agent knows, or by one the API server has (made since the
  // last LIST): the object decides, not the operator.
  {
    std::lock_guard lock{mu_};
    for (const auto& [object, t] : volumes_) {
      if (t.latest && t.latest->spec.csi_name == name) {
        return claimed_by(object, name, cfg_.node);
      }
    }
  }
  auto object = object_name_for(name);
  auto found = api_->get_object(berth_volumes(), object, clock_type::now() + call_bound);
  if (found) {
    auto obj = parse_volume_object(*found);
    if (!obj || (obj->spec.csi_name == name && obj->spec.node == cfg_.node)) {
      return claimed_by(object, name, cfg_.node);
    }
  } else if (!is(found.error(), ec::not_found)) {
    return make_error(ec::unavailable, "cannot confirm that no BerthVolume names volume "
                                         + quote_input(name) + " (" + describe(found.error())
                                         + "); nothing was removed");
  }
  if (auto err = desk_.remove(name)) {
    return err;
  }
  spdlog::warn("node agent: unclaimed CSI volume {} removed from node {} at an operator's "
               "request", quote_input(name), cfg_.node);
  std::lock_guard lock{mu_};
  drop_unclaimed_locked(name);
  return {};
}

caf::error node_agent::remove_unclaimed_snapshot(const std::string& name) {
  if (auto object = snapshots_.claimed_by(name); !object.empty()) {
    return snapshot_claimed_by(object, name, cfg_.node);
  }
  auto object = object_name_for(name);
  auto found = api_->get_object(berth_snapshots(), object, clock_type::now() + call_bound);
  if (found) {
    auto obj = parse_snapshot_object(*found);
    if (!obj || (obj->spec.csi_name == name && obj->spec.node == cfg_.node)) {
      return snapshot_claimed_by(object, name, cfg_.node);
    }
  } else if (!is(found.error(), ec::not_found)) {
    return make_error(ec::unavailable, "cannot confirm that no BerthSnapshot names snapshot "
                                         + quote_input(name) + " (" + describe(found.error())
                                         + "); nothing was removed");
  }
  if (auto err = desk_.remove_snapshot(name)) {
    return err;
  }
  spdlog::warn("node agent: unclaimed CSI snapshot {} removed from node {} at an operator's "
               "request", quote_input(name), cfg_.node);
  snapshots_.forget_unclaimed(name);
  report_capacity(false);
  return {};
}

} // namespace berth::kube::agent
