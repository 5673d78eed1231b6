#include "actors/release_rules.hpp"

#include <algorithm>
#include <cstdio>

#include "core/errors.hpp"
#include "core/text.hpp"

namespace berth {

namespace {

using time_point = release_clock::time_point;

/// "12.3 s" for logs.
std::string seconds(std::chrono::milliseconds d) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f s", static_cast<double>(d.count()) / 1000.0);
  return buf;
}

std::string head(const std::string& volume, const mount_id_state& s, release_reason reason) {
  return "volume " + volume + " released mount ID " + short_id(s.id) + " (reason "
         + to_string(reason) + ", count " + std::to_string(s.count) + " dropped): ";
}

release make_release(const std::string& volume, const mount_id_state& s, release_reason reason,
                     const std::string& container, const std::string& why) {
  return release{s.id, s.count, reason, container, head(volume, s, reason) + why};
}

/// The container list, when the running dockerd gave it (an older instance's
/// list says nothing about what runs now).
const container_list* current_list(const engine_view& view) {
  if (view.list && view.current && view.list->instance == *view.current) {
    return &*view.list;
  }
  return nullptr;
}

bool destroyed(const engine_view& view, const std::string& cid) {
  return std::any_of(view.events.begin(), view.events.end(), [&](const container_event& e) {
    return e.kind == container_event::destroy && e.container_id == cid;
  });
}

const container_info* find_container(const container_list& list, const std::string& cid) {
  for (const auto& c : list.containers) {
    if (c.id == cid) {
      return &c;
    }
  }
  return nullptr;
}

/// The container may be using its mounts now: its listed state says so and no
/// die or destroy event came after the list was taken.
bool in_use_now(const engine_view& view, const container_list& list, const container_info& c) {
  if (!uses_its_mounts(c.state)) {
    return false;
  }
  return std::none_of(view.events.begin(), view.events.end(), [&](const container_event& e) {
    return e.container_id == c.id && e.at > list.taken_at;
  });
}

/// The first die of `cid` strictly after `after` (a Mount at the same instant
/// as the die is taken as after it: the safe side).
std::optional<time_point> die_after(const engine_view& view, const std::string& cid,
                                    time_point after) {
  std::optional<time_point> first;
  for (const auto& e : view.events) {
    if (e.kind == container_event::die && e.container_id == cid && e.at > after
        && (!first || e.at < *first)) {
      first = e.at;
    }
  }
  return first;
}

/// Containers of `list` that mount `volume` and are not destroyed.
std::vector<const container_info*> users_of(const engine_view& view, const container_list& list,
                                            const std::string& volume) {
  std::vector<const container_info*> out;
  for (const auto& c : list.containers) {
    if (std::find(c.volumes.begin(), c.volumes.end(), volume) != c.volumes.end()
        && !destroyed(view, c.id)) {
      out.push_back(&c);
    }
  }
  return out;
}

std::string instances(const mount_id_state& s, const dockerd_key& current) {
  return "made by dockerd instance " + s.instance + ", not the running one (" + current + ")";
}

struct decider {
  const std::string& volume;
  const engine_view& view;
  time_point now;
  std::chrono::milliseconds grace;

  std::optional<release> died(const mount_id_state& s, const std::string& cid,
                              const std::string& which) const {
    auto at = die_after(view, cid, s.last_mounted);
    if (!at) {
      return std::nullopt;
    }
    auto since = std::chrono::duration_cast<std::chrono::milliseconds>(now - *at);
    if (since < grace) {
      return std::nullopt;
    }
    return make_release(volume, s, release_reason::died, cid,
                        which + " died " + seconds(since) + " ago, after this ID's last Mount, "
                          + "and no Unmount came within the " + seconds(grace)
                          + " grace period");
  }

  /// The map ties `s` to container `cid`.
  std::optional<release> tied(const mount_id_state& s, const std::string& cid) const {
    if (destroyed(view, cid)) {
      return make_release(volume, s, release_reason::container_gone, cid,
                          "its container " + short_id(cid) + " was destroyed");
    }
    const auto* list = current_list(view);
    const container_info* c = list ? find_container(*list, cid) : nullptr;
    if (list && !c && list->taken_at > s.last_mounted) {
      return make_release(volume, s, release_reason::container_gone, cid,
                          "its container " + short_id(cid)
                            + " is not in dockerd's container list");
    }
    if (c && in_use_now(view, *list, *c)) {
      return std::nullopt; // running, or taken over running by live-restore
    }
    bool older = !s.instance.empty() && s.instance != *view.current;
    if (older && c) {
      return make_release(volume, s, release_reason::stale_instance, cid,
                          instances(s, *view.current) + ", and its container " + short_id(cid)
                            + " is not running");
    }
    return died(s, cid, "its container " + short_id(cid));
  }

  /// No map entry for `s`, but a dockerd instance made it: decide from the
  /// containers that mount this volume. Per-ID rules would need the mount ID to
  /// name its container: it is a random ID that the Engine API never shows
  /// (docs/design.md, "Mount IDs dockerd forgot").
  std::optional<release> per_volume(const mount_id_state& s) const {
    const auto* list = current_list(view);
    if (!list) {
      return std::nullopt;
    }
    auto users = users_of(view, *list, volume);
    for (const auto* c : users) {
      if (in_use_now(view, *list, *c)) {
        return std::nullopt; // it may hold this ID (live-restore keeps it)
      }
    }
    if (s.instance != *view.current) {
      return make_release(volume, s, release_reason::stale_instance, "",
                          instances(s, *view.current) + ", and no running container mounts "
                            + volume);
    }
    // The current dockerd's ID: the list must be newer than the Mount, or a
    // container made after the list may hold it.
    if (list->taken_at <= s.last_mounted) {
      return std::nullopt;
    }
    if (users.empty()) {
      return make_release(volume, s, release_reason::container_gone, "",
                          "no container in dockerd's container list mounts " + volume);
    }
    // A die cannot be tied to an ID without the map: with two containers on the
    // volume, a `docker cp` into the other (stopped) one may be copying still.
    // With one, the ID is that container's or a copy into it before it started.
    if (users.size() == 1) {
      return died(s, users.front()->id,
                  "the one container mounting " + volume + ", " + short_id(users.front()->id)
                    + ",");
    }
    return std::nullopt;
  }
};

} // namespace

container_state parse_container_state(const std::string& text) {
  static const std::pair<const char*, container_state> names[] = {
    {"created", container_state::created},   {"running", container_state::running},
    {"paused", container_state::paused},     {"restarting", container_state::restarting},
    {"removing", container_state::removing}, {"exited", container_state::exited},
    {"dead", container_state::dead},
  };
  for (const auto& [name, state] : names) {
    if (text == name) {
      return state;
    }
  }
  return container_state::unknown;
}

bool uses_its_mounts(container_state state) {
  switch (state) {
    case container_state::running:
    case container_state::paused:
    case container_state::restarting:
    case container_state::unknown:
      return true;
    case container_state::created:
    case container_state::removing:
    case container_state::exited:
    case container_state::dead:
      return false;
  }
  return true;
}

dockerd_key make_dockerd_key(int pid, uint64_t start_ticks) {
  return std::to_string(pid) + "@" + std::to_string(start_ticks);
}

std::vector<mount_id_state> mount_id_states(const volume_record& rec) {
  std::vector<mount_id_state> out;
  out.reserve(rec.mounts.size());
  for (const auto& [id, count] : rec.mounts) {
    mount_id_state s;
    s.id = id;
    s.count = count;
    if (auto it = rec.origins.find(id); it != rec.origins.end()) {
      s.instance = it->second.dockerd;
      s.last_mounted = release_clock::time_point{
        std::chrono::milliseconds{it->second.last_mounted_ms}};
    }
    out.push_back(std::move(s));
  }
  return out;
}

mount_id_origin origin_of(const mount_id_state& s) {
  auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(
    s.last_mounted.time_since_epoch());
  return mount_id_origin{s.instance, ms.count()};
}

std::vector<release> decide_releases(const std::string& volume,
                                     const std::vector<mount_id_state>& ids,
                                     const engine_view& view, release_clock::time_point now,
                                     std::chrono::milliseconds die_grace) {
  std::vector<release> out;
  if (!view.current) {
    return out; // dockerd down or unknown: nothing can be checked
  }
  decider d{volume, view, now, die_grace};
  for (const auto& s : ids) {
    if (s.count == 0) {
      continue;
    }
    if (!s.instance.empty() && s.instance != *view.current && view.alive.count(s.instance) > 0) {
      continue; // another dockerd that still runs made it: this view does not show its containers
    }
    std::optional<release> r;
    if (view.container_of) {
      auto it = view.container_of->find(s.id);
      if (it != view.container_of->end()) {
        r = d.tied(s, it->second);
      } else if (!s.instance.empty()) {
        r = d.per_volume(s);
      }
    } else if (!s.instance.empty()) {
      r = d.per_volume(s);
    }
    // Otherwise the ID names no container (ECS, another caller): only an operator releases it.
    if (r) {
      out.push_back(std::move(*r));
    }
  }
  return out;
}

caf::expected<release> check_operator_release(const std::string& volume,
                                              const std::vector<mount_id_state>& ids,
                                              const std::string& id, const engine_view& view) {
  auto s = std::find_if(ids.begin(), ids.end(),
                        [&](const mount_id_state& x) { return x.id == id && x.count > 0; });
  if (s == ids.end()) {
    return make_error(ec::not_found, "volume " + volume + " counts no mount ID " + id
                                       + " (berthctl inspect " + volume + " lists its IDs)");
  }
  const auto* list = current_list(view);
  if (!list) {
    return make_release(volume, *s, release_reason::operator_request, "",
                        "by berthctl release; dockerd could not be asked, so running "
                        "containers were not checked");
  }
  std::string cid;
  if (view.container_of) {
    auto it = view.container_of->find(id);
    if (it != view.container_of->end()) {
      cid = it->second;
    }
  }
  if (!cid.empty()) {
    const auto* c = find_container(*list, cid);
    if (c && !destroyed(view, cid) && in_use_now(view, *list, *c)) {
      return make_error(ec::in_use, "mount ID " + short_id(id) + " of volume " + volume
                                      + " belongs to container " + short_id(cid)
                                      + ", which is running: stop the container instead");
    }
    return make_release(volume, *s, release_reason::operator_request, cid,
                        "by berthctl release; its container " + short_id(cid)
                          + " is not running");
  }
  std::string running;
  for (const auto* c : users_of(view, *list, volume)) {
    if (in_use_now(view, *list, *c)) {
      running += (running.empty() ? "" : ", ") + short_id(c->id);
    }
  }
  if (!running.empty()) {
    return make_error(ec::in_use, "volume " + volume + " is mounted by running container(s) "
                                    + running + ", and berth cannot tell which container mount ID "
                                    + short_id(id) + " belongs to: stop them first");
  }
  return make_release(volume, *s, release_reason::operator_request, "",
                      "by berthctl release; no running container mounts " + volume);
}

mount_tagging count_mount(const std::optional<mount_id_state>& existing, const std::string& id,
                          const dockerd_key& mounter, release_clock::time_point now) {
  if (!existing || existing->count == 0) {
    return {mount_id_state{id, 1, mounter, now}, 0};
  }
  const auto& was = *existing;
  if (!was.instance.empty() && !mounter.empty() && was.instance != mounter) {
    return {mount_id_state{id, 1, mounter, now}, was.count};
  }
  auto tag = was.instance == mounter ? mounter : dockerd_key{};
  return {mount_id_state{id, was.count + 1, tag, now}, 0};
}

} // namespace berth
