#include "protocols/docker/sync/engine_view_keeper.hpp"

#include <algorithm>

#include <spdlog/spdlog.h>

#include "core/errors.hpp"
#include "core/limits.hpp"

namespace berth::docker_sync {

std::optional<dockerd_key> key_of(const docker_engine::engine_instance& who) {
  if (!who.known() || !who.is_dockerd()) {
    return std::nullopt;
  }
  return make_dockerd_key(who.pid, who.start_ticks);
}

container_info to_container_info(const docker_engine::container& c) {
  container_info out;
  out.id = c.id;
  out.state = parse_container_state(c.state);
  for (const auto& m : c.volumes) {
    out.volumes.push_back(m.name);
  }
  return out;
}

engine_view_keeper::engine_view_keeper(std::shared_ptr<docker_engine::engine_api> api,
                                       std::shared_ptr<telemetry> stats, map_reader read_map)
  : api_(std::move(api)), stats_(std::move(stats)), read_map_(std::move(read_map)) {
}

std::string engine_view_keeper::describe() const {
  return api_ ? api_->describe() : std::string{"(off)"};
}

void engine_view_keeper::seen(const docker_engine::engine_instance& who) {
  if (stats_) {
    stats_->docker_engine_up.set(1);
  }
  auto key = key_of(who);
  view_.current = key;
  if (!key) {
    if (!unknown_warned_) {
      spdlog::warn("Docker API {}: cannot tell which dockerd answers ({}): mount IDs are not "
                   "reconciled until it can (is berthd in dockerd's pid namespace?)",
                   describe(), who.describe());
      unknown_warned_ = true;
    }
    return;
  }
  unknown_warned_ = false;
  if (key != last_) {
    spdlog::info("dockerd {} is new (before: {}): reconciling mount IDs", *key,
                 last_ ? *last_ : std::string{"none seen since berthd started"});
    last_ = key;
    root_dir_.clear();
    new_instance_ = true;
  }
}

void engine_view_keeper::opened(const docker_engine::engine_instance& who) {
  seen(who);
}

void engine_view_keeper::down() {
  view_.current.reset();
  if (stats_) {
    stats_->docker_engine_up.set(0);
  }
}

caf::error engine_view_keeper::refresh(release_clock::time_point now) {
  if (!api_) {
    return make_error(ec::unavailable, "the Docker Engine API is off (--docker-api \"\")");
  }
  auto list = api_->containers();
  if (!list) {
    down();
    return std::move(list.error());
  }
  seen(list->instance);
  container_list taken;
  taken.instance = view_.current.value_or("");
  taken.taken_at = now;
  for (const auto& c : list->items) {
    taken.containers.push_back(to_container_info(c));
  }
  view_.list = std::move(taken);
  if (root_dir_.empty()) {
    auto info = api_->info();
    if (info && !info->root_dir.empty()) {
      root_dir_ = info->root_dir;
    } else if (!info) {
      spdlog::debug("Docker API {}: /info failed: {}", describe(), berth::describe(info.error()));
    }
  }
  if (root_dir_.empty()) {
    view_.container_of.reset();
  } else if (auto map = read_map_(root_dir_)) {
    view_.container_of = merge_map(std::move(*map));
    map_warned_ = false;
  } else {
    view_.container_of.reset();
    if (!map_warned_) {
      spdlog::warn("dockerd's mount IDs cannot be tied to containers: {}; berth decides per "
                   "volume, from the containers that mount it",
                   berth::describe(map.error()));
      map_warned_ = true;
    }
  }
  prune(now);
  return {};
}

bool engine_view_keeper::add_event(const docker_engine::container_event& ev,
                                   release_clock::time_point now) {
  container_event::kind_t kind;
  if (ev.action == "die") {
    kind = container_event::die;
  } else if (ev.action == "destroy") {
    kind = container_event::destroy;
  } else {
    return false;
  }
  auto at = ev.time_nano > 0 ? release_clock::time_point{std::chrono::duration_cast<
                                 release_clock::duration>(std::chrono::nanoseconds{ev.time_nano})}
                             : now;
  view_.events.push_back(container_event{kind, ev.container_id, at});
  prune(now);
  return true;
}

void engine_view_keeper::prune(release_clock::time_point now) {
  auto& evs = view_.events;
  auto oldest = now - limits::docker_event_window;
  evs.erase(std::remove_if(evs.begin(), evs.end(),
                           [&](const container_event& e) { return e.at < oldest; }),
            evs.end());
  if (evs.size() > limits::max_docker_events_kept) {
    std::stable_sort(evs.begin(), evs.end(), [](const container_event& a,
                                                const container_event& b) { return a.at < b.at; });
    evs.erase(evs.begin(),
              evs.begin() + static_cast<std::ptrdiff_t>(evs.size() - limits::max_docker_events_kept));
  }
}

mount_map engine_view_keeper::merge_map(mount_map fresh) {
  if (view_.container_of) {
    for (const auto& [id, cid] : *view_.container_of) {
      if (fresh.count(id) == 0 && retained_.emplace(id, cid).second) {
        retained_order_.push_back(id);
      }
    }
  }
  while (retained_order_.size() > limits::max_retained_mount_ids) {
    retained_.erase(retained_order_.front());
    retained_order_.pop_front();
  }
  for (const auto& [id, cid] : retained_) {
    fresh.emplace(id, cid); // a fresh read's tie wins
  }
  return fresh;
}

bool engine_view_keeper::take_new_instance() {
  return std::exchange(new_instance_, false);
}

} // namespace berth::docker_sync
