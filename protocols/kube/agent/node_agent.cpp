#include "protocols/kube/agent/node_agent.hpp"

#include <algorithm>
#include <set>

#include <spdlog/spdlog.h>

#include "core/errors.hpp"
#include "core/retry.hpp"
#include "core/text.hpp"
#include "protocols/kube/agent/agent_bounds.hpp"

namespace berth::kube::agent {

using detail::call_bound;
using detail::clock_type;
using detail::watch_bound;

node_agent::node_agent(caf::actor_system& sys, registry_actor registry,
                       std::unique_ptr<object_api> api, agent_config cfg)
  : desk_(sys, std::move(registry)), api_(std::move(api)), cfg_(std::move(cfg)) {
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
  api_->cancel_calls();
  for (auto& t : threads_) {
    t.join();
  }
  threads_.clear();
  std::deque<removal> left;
  {
    std::lock_guard lock{mu_};
    left.swap(removals_);
  }
  for (auto& r : left) {
    r.done(make_error(ec::unavailable, "berthd is stopping: volume " + quote_input(r.name)
                                         + " was not removed; ask again once it runs"));
  }
}

size_t node_agent::objects_tracked() {
  std::lock_guard lock{mu_};
  return volumes_.size();
}

// -- the objects of this node, listed and watched -----------------------------------------

void node_agent::watch_loop() {
  kube::list_query mine;
  mine.label_selector = std::string{node_label} + "=" + node_label_value(cfg_.node);
  drain::backoff pause;
  drain::failure_log failures;
  bool first_list = true;
  auto stopping = [this] {
    std::lock_guard lock{mu_};
    return stopping_;
  };
  auto sleep = [&](std::chrono::milliseconds d) {
    std::unique_lock lock{mu_};
    wake_.wait_for(lock, d, [this] { return stopping_; });
  };
  while (!stopping()) {
    // LIST, every page, then WATCH from the list's resourceVersion.
    std::vector<std::string> names;
    std::string rv;
    auto q = mine;
    q.limit = 500;
    bool listed = true;
    do {
      auto page = api_->list_objects(berth_volumes(), q, clock_type::now() + call_bound);
      if (!page) {
        if (!stopping()) {
          failures.failed("listing the BerthVolumes of node " + cfg_.node, page.error());
        }
        listed = false;
        break;
      }
      for (const auto& item : page->items) {
        auto obj = parse_volume_object(item);
        if (!obj) {
          spdlog::warn("node agent: {}", describe(obj.error()));
          continue;
        }
        names.push_back(obj->name);
        seen(std::move(*obj));
      }
      rv = page->resource_version;
      q.next = page->next;
    } while (!q.next.empty());
    if (!listed) {
      sleep(pause.next());
      continue;
    }
    failures.succeeded("listing the BerthVolumes of node " + cfg_.node);
    pause.reset();
    forget_unseen(names);
    report_unclaimed(names);
    if (first_list) {
      first_list = false;
      report_capacity(true); // the scheduler can place volumes here from now on
    }
    // WATCH until it is gone (410: list again) or stopped.
    for (;;) {
      if (stopping()) {
        return;
      }
      auto end = api_->watch_objects(
        berth_volumes(), mine, rv,
        [&](const object_event& ev) {
          rv = ev.resource_version.empty() ? rv : ev.resource_version;
          if (ev.type == "BOOKMARK") {
            return true;
          }
          auto obj = parse_volume_object(ev.object);
          if (!obj) {
            spdlog::warn("node agent: {}", describe(obj.error()));
            return true;
          }
          if (ev.type == "DELETED") {
            std::lock_guard lock{mu_};
            auto it = volumes_.find(obj->name);
            if (it != volumes_.end()) {
              it->second.latest.reset();
              enqueue_locked(it->first, it->second);
            }
            return true;
          }
          seen(std::move(*obj));
          return true;
        },
        clock_type::now() + watch_bound);
      if (end && *end == watch_end::gone) {
        break; // list again
      }
      if (!end) {
        if (stopping()) {
          return;
        }
        failures.failed("watching the BerthVolumes of node " + cfg_.node, end.error());
        sleep(pause.next());
        if (is(end.error(), ec::invalid_argument)) {
          break; // a resourceVersion the server no longer takes: list again
        }
        continue;
      }
      failures.succeeded("watching the BerthVolumes of node " + cfg_.node);
      pause.reset();
    }
  }
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
  std::unique_lock lock{mu_};
  for (;;) {
    if (wake_.wait_for(lock, cfg_.resync, [this] { return stopping_; })) {
      return;
    }
    for (auto& [name, t] : volumes_) {
      if (t.latest) {
        enqueue_locked(name, t);
      }
    }
    lock.unlock();
    report_capacity(true);
    lock.lock();
  }
}

// -- carrying the objects out ----------------------------------------------------------

void node_agent::worker_loop() {
  std::unique_lock lock{mu_};
  for (;;) {
    wake_.wait(lock, [this] { return stopping_ || !removals_.empty() || !queue_.empty(); });
    if (stopping_) {
      return;
    }
    if (!removals_.empty()) {
      auto r = std::move(removals_.front());
      removals_.pop_front();
      lock.unlock();
      r.done(remove_unclaimed_now(r.name));
      lock.lock();
      continue;
    }
    auto name = queue_.front();
    queue_.pop_front();
    volumes_[name].queued = false;
    lock.unlock();
    handle(name);
    lock.lock();
  }
}

void node_agent::handle(const std::string& name) {
  std::unique_lock lock{mu_};
  auto it = volumes_.find(name);
  if (it == volumes_.end()) {
    return;
  }
  auto& t = it->second;
  if (!t.latest) {
    if (!t.busy) {
      volumes_.erase(it); // the object is gone; what berth holds here stays its record's
    }
    return;
  }
  if (t.busy) {
    return; // the running create or removal looks again when it ends
  }
  auto obj = *t.latest;
  spdlog::debug("node agent: BerthVolume {} generation {} ({}{})", name, obj.generation,
                obj.deleting ? "being deleted" : "", t.local_known ? "known here" : "first look");
  if (obj.deleting) {
    // Also a lost volume's: deleting it is what its error tells the operator to do.
    t.busy = true;
    lock.unlock();
    handle_removal(name, obj);
    return;
  }
  if (t.lost) {
    return; // reported lost: nothing is made in its place, only its deletion is served
  }
  if (!t.local_known) {
    t.busy = true;
    lock.unlock();
    handle_first_look(name, obj);
    return;
  }
  auto change = change_request(obj.spec, t.asked);
  if (change) {
    t.asked.bytes = std::max(t.asked.bytes, obj.spec.size_bytes);
    for (const auto& [k, v] : change->parameters) {
      t.asked.parameters[k] = v;
    }
    lock.unlock();
    handle_change(name, obj, std::move(*change));
    return;
  }
  if (obj.generation > t.status_generation) {
    lock.unlock();
    // Nothing to do for this generation (a change taken back, say): say so.
    auto rec = desk_.get(obj.spec.csi_name);
    if (rec && *rec) {
      write_status(obj, ready_status(**rec, obj.generation));
    }
  }
}

void node_agent::handle_removal(const std::string& name, const volume_object& obj) {
  auto err = desk_.remove(obj.spec.csi_name);
  if (err) {
    spdlog::warn("node agent: BerthVolume {} is being deleted, but volume {} cannot be removed "
                 "yet: {}; trying again at the next change or resync",
                 name, quote_input(obj.spec.csi_name), describe(err));
    auto status = failed_status(phase_deleting, err, obj.generation, nullptr);
    status.delete_request = obj.delete_request; // the DeleteVolume this failure answers
    write_status(obj, status);
  } else {
    spdlog::info("node agent: volume {} removed; BerthVolume {} may go", quote_input(obj.spec.csi_name),
                 name);
    drop_finalizer(obj);
    report_capacity(false);
  }
  std::lock_guard lock{mu_};
  auto& t = volumes_[name];
  t.busy = false;
  t.local_known = false;
  // What came while the removal ran waited for it: a new object under the name, or the
  // object gone (handle then forgets it). An object that did not change is left for the
  // next change or resync, so a removal that fails is not retried in a loop.
  if (!t.latest || t.latest->uid != obj.uid || t.latest->resource_version != obj.resource_version) {
    enqueue_locked(name, t);
  }
}

void node_agent::handle_first_look(const std::string& name, const volume_object& obj) {
  auto finish = [&](bool known, bool lost, const requested& asked) {
    std::lock_guard lock{mu_};
    auto& t = volumes_[name];
    t.busy = false;
    t.local_known = known;
    t.lost = lost;
    if (known) {
      t.asked = asked;
    }
    enqueue_locked(name, t); // the spec may have changed meanwhile
  };
  auto rec = desk_.get(obj.spec.csi_name);
  if (!rec) {
    spdlog::warn("node agent: cannot look up volume {}: {}", quote_input(obj.spec.csi_name),
                 describe(rec.error()));
    std::lock_guard lock{mu_};
    volumes_[name].busy = false; // the resync looks again
    return;
  }
  if (*rec) {
    finish(true, false, {(*rec)->capacity_bytes, (*rec)->mutable_parameters});
    return;
  }
  if (obj.status.phase == phase_ready) {
    // Made here and reported ready, and now without a record: never make an empty volume
    // in its place, which would hide that its data is gone.
    auto err = make_error(ec::not_found,
                          "berthd on node " + cfg_.node + " has no record of volume "
                            + quote_input(obj.spec.csi_name) + ", which it reported ready: its "
                            "storage is lost (was the state directory replaced?); delete the volume");
    spdlog::error("node agent: {}", describe(err));
    write_status(obj, failed_status(phase_failed, err, obj.generation, nullptr));
    finish(false, true, {});
    return;
  }
  auto made = desk_.create(obj.spec.csi_name, create_request(obj.spec, cfg_.default_backend));
  if (!made) {
    spdlog::warn("node agent: volume {} cannot be created: {}", quote_input(obj.spec.csi_name),
                 describe(made.error()));
    write_status(obj, failed_status(phase_failed, made.error(), obj.generation, nullptr));
    std::lock_guard lock{mu_};
    volumes_[name].busy = false;
    return;
  }
  spdlog::info("node agent: volume {} created ({} bytes) for BerthVolume {}",
               quote_input(obj.spec.csi_name), made->capacity_bytes, name);
  write_status(obj, ready_status(*made, obj.generation));
  report_capacity(false);
  finish(true, false, {made->capacity_bytes, made->mutable_parameters});
}

void node_agent::handle_change(const std::string& name, const volume_object& obj,
                               modify_request change) {
  auto rec = desk_.modify(obj.spec.csi_name, std::move(change));
  if (rec) {
    write_status(obj, ready_status(*rec, obj.generation));
    report_capacity(false);
    return;
  }
  spdlog::warn("node agent: volume {} cannot be changed as generation {} asks: {}",
               quote_input(obj.spec.csi_name), obj.generation, describe(rec.error()));
  auto now = desk_.get(obj.spec.csi_name);
  const volume_record* current = now && *now ? &**now : nullptr;
  write_status(obj, failed_status(phase_ready, rec.error(), obj.generation, current));
  if (current) {
    std::lock_guard lock{mu_};
    volumes_[name].asked = {current->capacity_bytes, current->mutable_parameters};
  }
}

} // namespace berth::kube::agent
