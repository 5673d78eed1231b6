// The node agent's workers: each takes an object off the queue (or an operator's removal
// first) and carries it out through the volume actors: its create, its changes and its
// removal, answered in its status.

#include "protocols/kube/agent/node_agent.hpp"

#include <algorithm>

#include <spdlog/spdlog.h>

#include "core/errors.hpp"
#include "core/text.hpp"

namespace berth::kube::agent {

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
  volumes_[name].local_known = false;
  end_turn_locked(name, obj);
}

void node_agent::end_turn_locked(const std::string& name, const volume_object& handled) {
  auto& t = volumes_[name];
  t.busy = false;
  // What came while the turn ran was dropped by handle() (busy): a new object under the
  // name, a deletion, a new spec, or the object gone (handle then forgets it). An object
  // that did not change is left for the next change or resync, so a create or a removal
  // that fails is not retried in a loop.
  if (!t.latest || t.latest->uid != handled.uid
      || t.latest->resource_version != handled.resource_version) {
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
    end_turn_locked(name, obj); // else the next change or the resync looks again
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
    end_turn_locked(name, obj); // the controller deletes a Failed object: maybe already
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
