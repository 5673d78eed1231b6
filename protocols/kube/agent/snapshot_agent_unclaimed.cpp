// The snapshot agent's unclaimed snapshots: the CSI snapshots recorded on this node that no
// BerthSnapshot names. Reported after each full LIST (log, berth_unclaimed_volumes, berthctl
// unclaimed) and never removed on their own; the node agent removes one at an operator's
// request (node_agent_unclaimed.cpp).

#include <algorithm>
#include <set>

#include <spdlog/spdlog.h>

#include "core/errors.hpp"
#include "core/text.hpp"
#include "protocols/kube/agent/snapshot_agent.hpp"

namespace berth::kube::agent {

void snapshot_agent::report_unclaimed(const std::vector<std::string>& names_seen) {
  auto mine = desk_.snapshots();
  if (!mine) {
    spdlog::warn("node agent: cannot list the CSI snapshots of node {} to find the unclaimed "
                 "ones: {}", node_, describe(mine.error()));
    return;
  }
  {
    std::lock_guard lock{mu_};
    std::set<std::string> claimed;
    for (const auto& name : names_seen) {
      auto it = snapshots_.find(name);
      if (it != snapshots_.end() && it->second.latest) {
        claimed.insert(it->second.latest->spec.csi_name);
      }
    }
    std::vector<std::string> now;
    for (const auto& rec : *mine) {
      if (claimed.count(rec.name)) {
        continue;
      }
      now.push_back(rec.name);
      bool known = unclaimed_ && std::binary_search(unclaimed_->begin(), unclaimed_->end(), rec.name);
      if (!known) {
        spdlog::warn("node agent: CSI snapshot {} is recorded on node {} but no BerthSnapshot "
                     "names it; berth keeps it and never removes it by itself (berthctl "
                     "unclaimed lists it, berthctl unclaimed rm removes it)",
                     quote_input(rec.name), node_);
      }
    }
    std::sort(now.begin(), now.end());
    unclaimed_ = std::move(now);
  }
  tell_.unclaimed_changed();
}

bool snapshot_agent::drop_unclaimed_locked(const std::string& csi_name) {
  if (!unclaimed_) {
    return false;
  }
  auto it = std::lower_bound(unclaimed_->begin(), unclaimed_->end(), csi_name);
  if (it == unclaimed_->end() || *it != csi_name) {
    return false;
  }
  unclaimed_->erase(it);
  return true;
}

std::optional<std::vector<std::string>> snapshot_agent::unclaimed() {
  std::lock_guard lock{mu_};
  return unclaimed_;
}

std::string snapshot_agent::claimed_by(const std::string& csi_name) {
  std::lock_guard lock{mu_};
  for (const auto& [object, t] : snapshots_) {
    if (t.latest && t.latest->spec.csi_name == csi_name) {
      return object;
    }
  }
  return {};
}

void snapshot_agent::forget_unclaimed(const std::string& csi_name) {
  bool dropped = false;
  {
    std::lock_guard lock{mu_};
    dropped = drop_unclaimed_locked(csi_name);
  }
  if (dropped) {
    tell_.unclaimed_changed();
  }
}

} // namespace berth::kube::agent
