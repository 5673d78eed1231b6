#include "protocols/docker/sync/release_driver.hpp"

#include <algorithm>

#include <spdlog/spdlog.h>

#include "core/errors.hpp"
#include "core/limits.hpp"
#include "core/text.hpp"
#include "protocols/docker/sync/dockerd_alive.hpp"

namespace berth::docker_sync {

namespace {

const mount_id_state* find_state(const std::vector<mount_id_state>& states,
                                 const std::string& id) {
  auto it = std::find_if(states.begin(), states.end(),
                         [&](const mount_id_state& s) { return s.id == id; });
  return it == states.end() ? nullptr : &*it;
}

} // namespace

release_driver::release_driver(driver_config cfg)
  : cfg_(std::move(cfg)), keeper_(cfg_.api, cfg_.stats, cfg_.read_map) {
  if (!cfg_.alive) {
    cfg_.alive = [](const dockerd_key& key) { return dockerd_alive(key); };
  }
  if (!cfg_.stopping) {
    cfg_.stopping = [] { return false; };
  }
}

void release_driver::started(release_clock::time_point now) {
  if (!keeper_.enabled()) {
    return;
  }
  refresh_and_pass("berthd started", now);
}

void release_driver::opened(const docker_engine::engine_instance& who,
                            release_clock::time_point now) {
  keeper_.opened(who);
  // After a new instance or an outage: what ran and died meanwhile is in a fresh list.
  refresh_and_pass(keeper_.take_new_instance() ? "a new dockerd instance"
                                               : "the events stream opened",
                   now);
}

void release_driver::down() {
  keeper_.down();
}

void release_driver::event(const docker_engine::container_event& ev,
                           release_clock::time_point now) {
  if (!keeper_.add_event(ev, now)) {
    return;
  }
  events_pending_ = true;
  if (ev.action == "die") {
    const auto& kept = keeper_.view().events.back();
    if (wakeups_.size() < limits::max_docker_events_kept) {
      wakeups_.insert(kept.at + cfg_.die_grace);
    }
  }
}

void release_driver::settle(release_clock::time_point now) {
  if (!events_pending_) {
    return;
  }
  events_pending_ = false;
  refresh_and_pass("container events", now);
}

void release_driver::tick(release_clock::time_point now) {
  bool due = false;
  while (!wakeups_.empty() && *wakeups_.begin() <= now) {
    wakeups_.erase(wakeups_.begin());
    due = true;
  }
  if (due) {
    pass("the grace period after a die ended", now);
  }
}

std::optional<release_clock::time_point> release_driver::next_wakeup() const {
  if (wakeups_.empty()) {
    return std::nullopt;
  }
  return *wakeups_.begin();
}

void release_driver::refresh_and_pass(const char* why, release_clock::time_point now) {
  if (auto err = keeper_.refresh(now)) {
    // The events follower says once per outage that dockerd does not answer.
    if (!refresh_failed_) {
      spdlog::info("mount IDs not reconciled ({}): dockerd's container list: {}", why,
                   describe(err));
      refresh_failed_ = true;
    }
    return;
  }
  refresh_failed_ = false;
  keeper_.take_new_instance(); // this pass covers it
  pass(why, now);
}

engine_view release_driver::view_for(const std::vector<volume_record>& recs) const {
  engine_view view = keeper_.view();
  std::set<dockerd_key> asked;
  for (const auto& rec : recs) {
    for (const auto& [id, origin] : rec.origins) {
      const auto& key = origin.dockerd;
      if (key.empty() || key == view.current || !asked.insert(key).second) {
        continue;
      }
      if (cfg_.alive(key)) {
        view.alive.insert(key);
      }
    }
  }
  return view;
}

void release_driver::pass(const char* why, release_clock::time_point now) {
  if (!keeper_.view().current) {
    spdlog::debug("mount IDs not reconciled ({}): no dockerd identified", why);
    return;
  }
  auto recs = cfg_.records();
  if (!recs) {
    spdlog::warn("mount IDs not reconciled ({}): cannot list the Docker volumes: {}", why,
                 describe(recs.error()));
    return;
  }
  ++passes_;
  auto view = view_for(*recs);
  size_t sent = 0;
  uint64_t dropped = 0;
  for (const auto& rec : *recs) {
    if (rec.mounts.empty()) {
      continue;
    }
    auto states = mount_id_states(rec);
    for (auto& r : decide_releases(rec.name, states, view, now, cfg_.die_grace)) {
      if (cfg_.stopping()) {
        return;
      }
      const auto* s = find_state(states, r.id);
      mount_release msg{r.id, r.reason, true, s ? origin_of(*s) : mount_id_origin{}, r.log};
      auto got = cfg_.sink(rec.name, msg);
      ++sent;
      if (!got) {
        spdlog::warn("volume {}: release of mount ID {} (reason {}) failed: {}; retried at the "
                     "next reconciliation",
                     rec.name, short_id(r.id), to_string(r.reason), describe(got.error()));
      } else {
        dropped += *got;
      }
    }
  }
  spdlog::debug("mount IDs reconciled ({}): {} record(s), {} release(s) sent, count {} dropped",
                why, recs->size(), sent, dropped);
}

caf::expected<operator_release_result>
release_driver::operator_release(const std::string& volume, const std::string& id,
                                 release_clock::time_point now) {
  auto recs = cfg_.records();
  if (!recs) {
    return std::move(recs.error());
  }
  auto rec = std::find_if(recs->begin(), recs->end(),
                          [&](const volume_record& r) { return r.name == volume; });
  if (rec == recs->end()) {
    return make_error(ec::not_found, "no Docker volume " + volume
                                       + " (berthctl volumes lists them; a CSI volume has no "
                                         "mount IDs to release)");
  }
  std::string why;
  if (auto err = keeper_.refresh(now)) {
    why = describe(err);
  } else if (!keeper_.view().current) {
    why = "berth cannot tell which dockerd answers " + keeper_.describe();
  }
  bool new_instance = keeper_.take_new_instance();
  auto view = keeper_.view();
  if (!why.empty()) {
    view.current.reset(); // the rules then allow it, unchecked
  }
  auto states = mount_id_states(*rec);
  auto decided = check_operator_release(volume, states, id, view);
  if (!decided) {
    return std::move(decided.error());
  }
  const auto* s = find_state(states, id);
  mount_release msg{id, release_reason::operator_request, false,
                    s ? origin_of(*s) : mount_id_origin{}, decided->log};
  auto dropped = cfg_.sink(volume, msg);
  if (!dropped) {
    return std::move(dropped.error());
  }
  operator_release_result out;
  out.dropped = *dropped;
  out.checked = why.empty();
  out.unchecked_why = why;
  if (!why.empty()) {
    spdlog::warn("volume {}: berthctl release of mount ID {} (count {} dropped) not checked "
                 "against dockerd: {}",
                 volume, short_id(id), *dropped, why);
  }
  if (new_instance) {
    pass("a new dockerd instance", now);
  }
  return out;
}

} // namespace berth::docker_sync
