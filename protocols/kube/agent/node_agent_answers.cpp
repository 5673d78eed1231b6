// The node agent's answers in the API: a BerthVolume's status and finalizer, and the
// Node's capacity.

#include "protocols/kube/agent/node_agent.hpp"

#include <algorithm>

#include <spdlog/spdlog.h>

#include "core/errors.hpp"
#include "core/text.hpp"
#include "protocols/kube/agent/agent_bounds.hpp"
#include "protocols/kube/storage_finalizer.hpp"

namespace berth::kube::agent {

using detail::call_bound;
using detail::clock_type;

void node_agent::write_status(const volume_object& obj, const volume_object_status& status) {
  const auto& name = obj.name;
  auto is_its_answer = [&] {
    auto it = volumes_.find(name);
    if (it == volumes_.end() || it->second.uid != obj.uid) {
      return false; // the object is gone, or was deleted and made again: this answer is not its
    }
    return status.observed_generation >= it->second.status_generation; // else a newer one came
  };
  std::shared_ptr<std::mutex> writes;
  {
    std::lock_guard lock{mu_};
    if (!is_its_answer()) {
      return;
    }
    writes = volumes_[name].status_writes;
  }
  // The check below and the write are one step: a write of an older generation that
  // passed its check before a newer one was written would otherwise land over it.
  std::lock_guard one_at_a_time{*writes};
  {
    std::lock_guard lock{mu_};
    if (!is_its_answer()) {
      return;
    }
  }
  auto res = api_->merge_patch(berth_volumes(), name, "status", status_patch(status, obj.status),
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
  if (auto err = release_storage_finalizer(*api_, berth_volumes(), obj.name, obj.uid, clock_type::now() + call_bound)) {
    spdlog::warn("node agent: cannot release BerthVolume {}: {}", obj.name, describe(err));
  }
}

void node_agent::report_capacity(bool force) {
  capacity_by_backend now;
  for (const auto& [name, b] : cfg_.backends) {
    if (auto bytes = b->available_capacity()) {
      now[name] = *bytes;
    }
  }
  std::lock_guard lock{capacity_mu_};
  auto at = capacity_report::clock::now();
  if (!capacity_.due(now, at, force)) {
    return;
  }
  auto res = api_->merge_patch(nodes(), cfg_.node, "", capacity_patch(now), at + call_bound);
  if (!res) {
    // Measured again every interval, and written once the API takes it.
    if (!capacity_failing_) {
      spdlog::warn("node agent: cannot report the capacity of node {}: {}; trying again", cfg_.node,
                   describe(res.error()));
    }
    capacity_failing_ = true;
    return;
  }
  if (capacity_failing_) {
    spdlog::info("node agent: the capacity of node {} is reported again", cfg_.node);
    capacity_failing_ = false;
  }
  capacity_.written(std::move(now), at);
}

} // namespace berth::kube::agent
