// The node agent's life and its view of the API: start and stop, the LIST and WATCH of
// this node's BerthVolumes, and the queue of objects to look at (its workers, which carry
// them out, are in node_agent_work.cpp).

#include "protocols/kube/agent/node_agent.hpp"

#include <algorithm>
#include <set>

#include <spdlog/spdlog.h>

#include "core/errors.hpp"
#include "protocols/kube/agent/list_watch.hpp"

namespace berth::kube::agent {

node_agent::node_agent(caf::actor_system& sys, registry_actor registry,
                       std::unique_ptr<object_api> api, agent_config cfg)
  : desk_(sys, registry),
    api_(std::move(api)),
    cfg_(std::move(cfg)),
    capacity_(cfg_.capacity),
    snapshots_(sys, std::move(registry), *api_, cfg_.node, cfg_.default_backend, cfg_.resync,
               {[this] { report_capacity(false); },
                [this] {
                  std::lock_guard lock{mu_};
                  count_unclaimed_locked();
                }}) {
}

node_agent::~node_agent() {
  stop();
}

void node_agent::start() {
  spdlog::info("node agent: carrying out the BerthVolumes of node {} (label {}={})", cfg_.node,
               node_label, node_label_value(cfg_.node));
  threads_.emplace_back([this] { watch_loop(); });
  threads_.emplace_back([this] { ticker_loop(); });
  for (size_t i = 0; i < std::max<size_t>(1, cfg_.workers); ++i) {
    threads_.emplace_back([this] { worker_loop(); });
  }
  snapshots_.start();
}

void node_agent::stop() {
  {
    std::lock_guard lock{mu_};
    if (stopping_ && threads_.empty()) {
      return;
    }
    stopping_ = true;
  }
  wake_.notify_all();
  snapshots_.begin_stop();
  api_->cancel_calls();
  for (auto& t : threads_) {
    t.join();
  }
  threads_.clear();
  snapshots_.join();
  refuse_removals_left();
}

size_t node_agent::objects_tracked() {
  size_t volumes = 0;
  {
    std::lock_guard lock{mu_};
    volumes = volumes_.size();
  }
  return volumes + snapshots_.objects_tracked();
}

// -- the objects of this node, listed and watched -----------------------------------------

void node_agent::watch_loop() {
  kube::list_query mine;
  mine.label_selector = std::string{node_label} + "=" + node_label_value(cfg_.node);
  bool first_list = true;
  watch_handlers h;
  h.seen = [this](const std::string& json) -> std::string {
    auto obj = parse_volume_object(json);
    if (!obj) {
      spdlog::warn("node agent: {}", describe(obj.error()));
      return {};
    }
    auto name = obj->name;
    seen(std::move(*obj));
    return name;
  };
  h.deleted = [this](const std::string& json) {
    auto obj = parse_volume_object(json);
    if (!obj) {
      spdlog::warn("node agent: {}", describe(obj.error()));
      return;
    }
    std::lock_guard lock{mu_};
    auto it = volumes_.find(obj->name);
    if (it != volumes_.end()) {
      it->second.latest.reset();
      enqueue_locked(it->first, it->second);
    }
  };
  h.listed = [&](const std::vector<std::string>& names) {
    forget_unseen(names);
    report_unclaimed(names);
    if (first_list) {
      first_list = false;
      report_capacity(true); // the scheduler can place volumes here from now on
    }
  };
  h.stopping = [this] {
    std::lock_guard lock{mu_};
    return stopping_;
  };
  h.sleep = [this](std::chrono::milliseconds d) {
    std::unique_lock lock{mu_};
    wake_.wait_for(lock, d, [this] { return stopping_; });
  };
  list_and_watch(*api_, berth_volumes(), mine, "the BerthVolumes of node " + cfg_.node, h);
}

void node_agent::seen(volume_object obj) {
  if (obj.spec.node != cfg_.node) {
    return; // the label says this node, the spec another: the spec is the truth
  }
  std::lock_guard lock{mu_};
  claim_locked(obj.spec.csi_name);
  auto& t = volumes_[obj.name];
  if (t.uid != obj.uid) {
    // A new object under a known name (deleted and made again): what was answered and
    // asked for the old one says nothing of it. A removal still running keeps `busy`.
    t.uid = obj.uid;
    t.local_known = false;
    t.lost = false;
    t.asked = {};
    t.status_generation = 0;
  }
  bool changed = !t.latest || t.latest->resource_version != obj.resource_version;
  auto name = obj.name;
  // A generation the status answers already (before a restart, say) needs no answer again.
  t.status_generation = std::max(t.status_generation, obj.status.observed_generation);
  t.latest = std::move(obj);
  if (changed) {
    enqueue_locked(name, t);
  }
}

void node_agent::forget_unseen(const std::vector<std::string>& names) {
  // Also after an empty list: then every object went while no watch ran.
  std::set<std::string> listed{names.begin(), names.end()};
  std::lock_guard lock{mu_};
  for (auto& [name, t] : volumes_) {
    if (!listed.count(name) && t.latest) {
      t.latest.reset();
      enqueue_locked(name, t); // handle forgets it, once nothing of it runs
    }
  }
}

void node_agent::enqueue_locked(const std::string& name, tracked& t) {
  if (!t.queued) {
    t.queued = true;
    queue_.push_back(name);
    // All: the ticker and the watcher's pauses wait on this variable too, and a
    // notification one of them took would leave the work for no worker.
    wake_.notify_all();
  }
}

void node_agent::ticker_loop() {
  using clock = std::chrono::steady_clock;
  auto next_resync = clock::now() + cfg_.resync;
  std::unique_lock lock{mu_};
  for (;;) {
    // Capacity is measured every interval: a change the interval held back after a
    // worker's report is written at the next tick.
    auto wake_at = std::min(next_resync, clock::now() + capacity_.rule().interval);
    if (wake_.wait_until(lock, wake_at, [this] { return stopping_; })) {
      return;
    }
    bool resync = clock::now() >= next_resync;
    if (resync) {
      next_resync = clock::now() + cfg_.resync;
      for (auto& [name, t] : volumes_) {
        if (t.latest) {
          enqueue_locked(name, t);
        }
      }
    }
    lock.unlock();
    report_capacity(resync);
    lock.lock();
  }
}

} // namespace berth::kube::agent
