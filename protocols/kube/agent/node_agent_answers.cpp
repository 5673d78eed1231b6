// The node agent's answers in the API: a BerthVolume's status and finalizer, the Node's
// capacity, and the log line for a local volume no object claims.

#include "protocols/kube/agent/node_agent.hpp"

#include <algorithm>
#include <iterator>
#include <set>

#include <spdlog/spdlog.h>

#include "core/errors.hpp"
#include "core/text.hpp"
#include "protocols/kube/agent/agent_bounds.hpp"

namespace berth::kube::agent {

using detail::call_bound;
using detail::clock_type;
using detail::max_conflict_retries;

void node_agent::write_status(const volume_object& obj, const volume_object_status& status) {
  const auto& name = obj.name;
  {
    std::lock_guard lock{mu_};
    auto it = volumes_.find(name);
    if (it == volumes_.end() || it->second.uid != obj.uid) {
      return; // the object is gone, or was deleted and made again: this answer is not its
    }
    if (status.observed_generation < it->second.status_generation) {
      return; // a newer generation was answered already
    }
  }
  auto res = api_->merge_patch(berth_volumes(), name, "status", status_patch(status),
                               clock_type::now() + call_bound);
  if (!res) {
    if (!is(res.error(), ec::not_found)) {
      spdlog::warn("node agent: cannot write the status of BerthVolume {}: {}", name,
                   describe(res.error()));
    }
    return;
  }
  std::lock_guard lock{mu_};
  if (auto it = volumes_.find(name); it != volumes_.end() && it->second.uid == obj.uid) {
    it->second.status_generation = std::max(it->second.status_generation, status.observed_generation);
  }
}

void node_agent::drop_finalizer(const volume_object& obj) {
  for (int attempt = 0; attempt < max_conflict_retries; ++attempt) {
    auto json = api_->get_object(berth_volumes(), obj.name, clock_type::now() + call_bound);
    if (!json) {
      if (!is(json.error(), ec::not_found)) {
        spdlog::warn("node agent: cannot read BerthVolume {} to release it: {}", obj.name,
                     describe(json.error()));
      }
      return;
    }
    auto now = parse_volume_object(*json);
    if (!now) {
      return;
    }
    std::vector<std::string> kept;
    std::copy_if(now->finalizers.begin(), now->finalizers.end(), std::back_inserter(kept),
                 [](const std::string& f) { return f != storage_finalizer; });
    if (kept.size() == now->finalizers.size()) {
      return;
    }
    auto res = api_->merge_patch(berth_volumes(), obj.name, "",
                                 finalizers_patch(now->resource_version, kept),
                                 clock_type::now() + call_bound);
    if (res || is(res.error(), ec::not_found)) {
      return;
    }
    if (!is(res.error(), ec::aborted)) {
      spdlog::warn("node agent: cannot release BerthVolume {}: {}", obj.name, describe(res.error()));
      return;
    }
  }
}

void node_agent::report_capacity(bool force) {
  std::map<std::string, uint64_t> now;
  for (const auto& [name, b] : cfg_.backends) {
    if (auto bytes = b->available_capacity()) {
      now[name] = *bytes;
    }
  }
  std::lock_guard lock{capacity_mu_};
  if (!force && now == capacity_written_) {
    return;
  }
  auto res = api_->merge_patch(nodes(), cfg_.node, "", capacity_patch(now),
                               clock_type::now() + call_bound);
  if (!res) {
    spdlog::warn("node agent: cannot report the capacity of node {}: {}", cfg_.node,
                 describe(res.error()));
    return;
  }
  capacity_written_ = std::move(now);
}

void node_agent::report_unclaimed(const std::vector<std::string>& names_seen) {
  auto mine = desk_.volumes();
  if (!mine) {
    return;
  }
  std::set<std::string> claimed;
  {
    std::lock_guard lock{mu_};
    for (const auto& name : names_seen) {
      auto it = volumes_.find(name);
      if (it != volumes_.end() && it->second.latest) {
        claimed.insert(it->second.latest->spec.csi_name);
      }
    }
  }
  for (const auto& rec : *mine) {
    if (!claimed.count(rec.name)) {
      spdlog::warn("node agent: CSI volume {} is recorded on node {} but no BerthVolume names it; "
                   "berth keeps it and never removes it by itself (berthctl inspect shows it)",
                   quote_input(rec.name), cfg_.node);
    }
  }
}

} // namespace berth::kube::agent
