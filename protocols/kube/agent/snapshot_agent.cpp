#include "protocols/kube/agent/snapshot_agent.hpp"

#include <set>

#include <spdlog/spdlog.h>

#include "core/errors.hpp"
#include "core/text.hpp"
#include "protocols/kube/agent/agent_bounds.hpp"
#include "protocols/kube/agent/list_watch.hpp"
#include "protocols/kube/agent/snapshot_intent.hpp"
#include "protocols/kube/berth_objects.hpp"
#include "protocols/kube/storage_finalizer.hpp"

namespace berth::kube::agent {

using detail::call_bound;
using detail::clock_type;

snapshot_agent::snapshot_agent(caf::actor_system& sys, registry_actor registry, object_api& api,
                               std::string node, std::string default_backend,
                               std::chrono::seconds resync, callbacks tell)
  : desk_(sys, std::move(registry)),
    api_(api),
    node_(std::move(node)),
    default_backend_(std::move(default_backend)),
    resync_(resync),
    tell_(std::move(tell)) {
}

snapshot_agent::~snapshot_agent() {
  begin_stop();
  join();
}

void snapshot_agent::start() {
  threads_.emplace_back([this] { watch_loop(); });
  threads_.emplace_back([this] { worker_loop(); });
  threads_.emplace_back([this] { ticker_loop(); });
}

void snapshot_agent::ticker_loop() {
  std::unique_lock lock{mu_};
  for (;;) {
    if (wake_.wait_for(lock, resync_, [this] { return stopping_; })) {
      return;
    }
    for (auto& [name, t] : snapshots_) {
      if (t.latest) {
        enqueue_locked(name, t);
      }
    }
  }
}

void snapshot_agent::begin_stop() {
  {
    std::lock_guard lock{mu_};
    stopping_ = true;
  }
  wake_.notify_all();
}

void snapshot_agent::join() {
  for (auto& t : threads_) {
    t.join();
  }
  threads_.clear();
}

size_t snapshot_agent::objects_tracked() {
  std::lock_guard lock{mu_};
  return snapshots_.size();
}

bool snapshot_agent::stopping() {
  std::lock_guard lock{mu_};
  return stopping_;
}

// -- the snapshots of this node, listed and watched -----------------------------------------

void snapshot_agent::watch_loop() {
  kube::list_query mine;
  mine.label_selector = std::string{node_label} + "=" + node_label_value(node_);
  watch_handlers h;
  h.seen = [this](const std::string& json) -> std::string {
    auto obj = parse_snapshot_object(json);
    if (!obj) {
      spdlog::warn("node agent: {}", describe(obj.error()));
      return {};
    }
    return seen(std::move(*obj));
  };
  h.deleted = [this](const std::string& json) {
    std::lock_guard lock{mu_};
    auto it = snapshots_.find(object_name_of(json));
    if (it != snapshots_.end()) {
      it->second.latest.reset();
      enqueue_locked(it->first, it->second);
    }
  };
  h.listed = [this](const std::vector<std::string>& names) {
    forget_unseen(names);
    report_unclaimed(names);
  };
  h.stopping = [this] { return stopping(); };
  h.sleep = [this](std::chrono::milliseconds d) {
    std::unique_lock lock{mu_};
    wake_.wait_for(lock, d, [this] { return stopping_; });
  };
  list_and_watch(api_, berth_snapshots(), mine, "the BerthSnapshots of node " + node_, h);
}

std::string snapshot_agent::seen(snapshot_object obj) {
  if (obj.spec.node != node_) {
    return {}; // the label says this node, the spec another: the spec is the truth
  }
  auto name = obj.name;
  bool claimed = false;
  {
    std::lock_guard lock{mu_};
    claimed = drop_unclaimed_locked(obj.spec.csi_name);
  }
  if (claimed) {
    spdlog::info("node agent: CSI snapshot {} is claimed by a BerthSnapshot again",
                 quote_input(obj.spec.csi_name));
    tell_.unclaimed_changed();
  }
  std::lock_guard lock{mu_};
  auto& t = snapshots_[name];
  bool changed = !t.latest || t.latest->resource_version != obj.resource_version;
  t.latest = std::move(obj);
  if (changed) {
    enqueue_locked(name, t);
  }
  return name;
}

void snapshot_agent::forget_unseen(const std::vector<std::string>& names) {
  std::set<std::string> listed{names.begin(), names.end()};
  std::lock_guard lock{mu_};
  for (auto& [name, t] : snapshots_) {
    if (!listed.count(name) && t.latest) {
      t.latest.reset();
      enqueue_locked(name, t);
    }
  }
}

void snapshot_agent::enqueue_locked(const std::string& name, tracked& t) {
  if (!t.queued) {
    t.queued = true;
    queue_.push_back(name);
    wake_.notify_all();
  }
}

// -- the worker -------------------------------------------------------------------------------

void snapshot_agent::worker_loop() {
  std::unique_lock lock{mu_};
  for (;;) {
    wake_.wait(lock, [this] { return stopping_ || !queue_.empty(); });
    if (stopping_) {
      return;
    }
    auto name = queue_.front();
    queue_.pop_front();
    snapshots_[name].queued = false;
    lock.unlock();
    handle(name);
    lock.lock();
  }
}

void snapshot_agent::handle(const std::string& name) {
  std::optional<snapshot_object> obj;
  {
    std::lock_guard lock{mu_};
    auto it = snapshots_.find(name);
    if (it == snapshots_.end()) {
      return;
    }
    if (!it->second.latest) {
      snapshots_.erase(it); // the object is gone; what berth holds here stays its record's
      return;
    }
    obj = it->second.latest;
  }
  if (obj->deleting) {
    handle_removal(*obj);
    return;
  }
  const auto& st = obj->status;
  if (st.phase == phase_failed && st.observed_generation >= obj->generation) {
    return; // answered: the controller deletes a snapshot that failed
  }
  handle_cut(*obj);
}

void snapshot_agent::handle_removal(const snapshot_object& obj) {
  auto rec = desk_.get_snapshot(obj.spec.csi_name);
  if (!rec) {
    spdlog::warn("node agent: cannot look up snapshot {} of BerthSnapshot {}, which is being "
                 "deleted: {}; trying again at the next change or resync",
                 quote_input(obj.spec.csi_name), obj.name, describe(rec.error()));
    return;
  }
  if (*rec && (*rec)->source != volume_source(obj.spec.source_volume)) {
    // Not this object's: a snapshot of that name taken of another volume (its cut was
    // refused). It stays, unclaimed, until an operator removes it; the object may go.
    spdlog::warn("node agent: BerthSnapshot {} is deleted; snapshot {} of {} is not its and "
                 "stays", obj.name, quote_input(obj.spec.csi_name), (*rec)->source.describe());
  } else {
    if (auto err = desk_.remove_snapshot(obj.spec.csi_name)) {
      spdlog::warn("node agent: BerthSnapshot {} is being deleted, but snapshot {} cannot be "
                   "removed yet: {}; trying again at the next change or resync",
                   obj.name, quote_input(obj.spec.csi_name), describe(err));
      auto status = snapshot_failed(phase_deleting, err, obj.generation);
      status.delete_request = obj.delete_request; // the DeleteSnapshot this failure answers
      write_status(obj, status);
      return;
    }
    spdlog::info("node agent: snapshot {} removed; BerthSnapshot {} may go",
                 quote_input(obj.spec.csi_name), obj.name);
    tell_.stored();
  }
  if (auto err = release_storage_finalizer(api_, berth_snapshots(), obj.name, obj.uid,
                                           clock_type::now() + call_bound)) {
    spdlog::warn("node agent: cannot release BerthSnapshot {}: {}", obj.name, describe(err));
  }
}

void snapshot_agent::handle_cut(const snapshot_object& obj) {
  auto rec = desk_.get_snapshot(obj.spec.csi_name);
  if (!rec) {
    spdlog::warn("node agent: cannot look up snapshot {}: {}", quote_input(obj.spec.csi_name),
                 describe(rec.error()));
    return; // the next change or resync looks again
  }
  if (*rec && (*rec)->source != volume_source(obj.spec.source_volume)) {
    // The name was taken of another volume (under an object since gone): not this one's.
    auto err = make_error(ec::already_exists,
                          "snapshot " + quote_input(obj.spec.csi_name) + " on node " + node_
                            + " was taken of " + (*rec)->source.describe() + ", not of volume "
                            + quote_input(obj.spec.source_volume));
    if (obj.status.phase != phase_failed || obj.status.observed_generation < obj.generation) {
      spdlog::warn("node agent: BerthSnapshot {}: {}", obj.name, describe(err));
      write_status(obj, snapshot_failed(phase_failed, err, obj.generation));
    }
    return;
  }
  if (*rec) {
    if (obj.status.phase != phase_ready || obj.status.observed_generation < obj.generation) {
      write_status(obj, snapshot_ready(**rec, obj.generation));
    }
    return;
  }
  if (obj.status.phase == phase_ready) {
    auto err = make_error(ec::not_found,
                          "berthd on node " + node_ + " has no record of snapshot "
                            + quote_input(obj.spec.csi_name) + ", which it reported ready: it "
                            "is lost (was the state directory replaced?); delete the snapshot");
    spdlog::error("node agent: {}", describe(err));
    write_status(obj, snapshot_failed(phase_failed, err, obj.generation));
    return;
  }
  auto made = desk_.create(obj.spec.csi_name, snapshot_request(obj.spec, default_backend_));
  if (made && made->kind != record_kind::snapshot) {
    made = make_error(ec::already_exists, "name " + quote_input(obj.spec.csi_name)
                                            + " is taken by a " + to_string(made->kind)
                                            + " on node " + node_);
  }
  if (!made) {
    spdlog::warn("node agent: snapshot {} of volume {} cannot be cut: {}",
                 quote_input(obj.spec.csi_name), quote_input(obj.spec.source_volume),
                 describe(made.error()));
    write_status(obj, snapshot_failed(phase_failed, made.error(), obj.generation));
    return;
  }
  spdlog::info("node agent: snapshot {} of volume {} cut ({} bytes) for BerthSnapshot {}",
               quote_input(obj.spec.csi_name), quote_input(obj.spec.source_volume),
               made->capacity_bytes, obj.name);
  write_status(obj, snapshot_ready(*made, obj.generation));
  tell_.stored();
}

void snapshot_agent::write_status(const snapshot_object& obj, const snapshot_object_status& status) {
  {
    std::lock_guard lock{mu_};
    auto it = snapshots_.find(obj.name);
    if (it == snapshots_.end() || !it->second.latest || it->second.latest->uid != obj.uid) {
      return; // gone, or deleted and made again: this answer is not its
    }
  }
  auto res = api_.merge_patch(berth_snapshots(), obj.name, "status",
                              snapshot_status_patch(status, obj.status),
                              clock_type::now() + call_bound);
  if (!res && !is(res.error(), ec::not_found)) {
    spdlog::warn("node agent: cannot write the status of BerthSnapshot {}: {}", obj.name,
                 describe(res.error()));
  }
}

} // namespace berth::kube::agent
