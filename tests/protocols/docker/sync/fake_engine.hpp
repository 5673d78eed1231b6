#pragma once

// Stand-ins for the dockerd reconciliation's tests: an Engine API that answers from what
// the test sets (thread-safe, so docker_sync's threads may use it), and the registry's seams.

#include <condition_variable>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "core/errors.hpp"
#include "protocols/docker/engine/engine_api.hpp"
#include "protocols/docker/sync/seams.hpp"
#include "tests/support/captured_log.hpp"

namespace berth::test {

/// An Engine API whose answers the test sets.
struct fake_engine : docker_engine::engine_api {
  mutable std::mutex mutex;
  bool up = true;
  docker_engine::engine_instance who{4242, 1000, "dockerd"};
  std::vector<docker_engine::container> items;
  std::string root_dir = "/fake/docker";
  int list_calls = 0;
  /// Sent once the events stream opens.
  std::vector<docker_engine::container_event> to_send;

  void set_running(const std::string& id, const std::string& state,
                   std::vector<std::string> volumes = {"kv"}) {
    std::lock_guard<std::mutex> lock{mutex};
    for (auto& c : items) {
      if (c.id == id) {
        c.state = state;
        return;
      }
    }
    docker_engine::container c;
    c.id = id;
    c.state = state;
    for (auto& v : volumes) {
      c.volumes.push_back(docker_engine::volume_mount{v, "berth", "/data"});
    }
    items.push_back(std::move(c));
  }
  void remove(const std::string& id) {
    std::lock_guard<std::mutex> lock{mutex};
    items.erase(std::remove_if(items.begin(), items.end(),
                               [&](const docker_engine::container& c) { return c.id == id; }),
                items.end());
  }
  void set_up(bool is_up) {
    std::lock_guard<std::mutex> lock{mutex};
    up = is_up;
  }
  void set_instance(docker_engine::engine_instance i) {
    std::lock_guard<std::mutex> lock{mutex};
    who = std::move(i);
  }

  std::string describe() const override {
    return "unix:///fake/docker.sock";
  }
  caf::error refused() const {
    return make_error(ec::unavailable,
                      "Docker API unix:///fake/docker.sock: connect: Connection refused");
  }
  caf::expected<docker_engine::ping_reply> ping() override {
    std::lock_guard<std::mutex> lock{mutex};
    if (!up) {
      return refused();
    }
    return docker_engine::ping_reply{"1.41", "Docker/20.10.24", who};
  }
  caf::expected<docker_engine::engine_info> info() override {
    std::lock_guard<std::mutex> lock{mutex};
    if (!up) {
      return refused();
    }
    return docker_engine::engine_info{"JXZP", root_dir, "20.10.24", "", who};
  }
  caf::expected<docker_engine::container_list> containers() override {
    std::lock_guard<std::mutex> lock{mutex};
    ++list_calls;
    if (!up) {
      return refused();
    }
    return docker_engine::container_list{items, who};
  }
  /// Opens (when up) and stays open until `stop`.
  caf::expected<docker_engine::events_end> events(const docker_engine::event_handler& h,
                                                  docker_engine::stop_signal& stop,
                                                  int64_t) override {
    docker_engine::engine_instance opened;
    std::vector<docker_engine::container_event> send;
    {
      std::lock_guard<std::mutex> lock{mutex};
      if (!up) {
        return refused();
      }
      opened = who;
      send.swap(to_send);
    }
    if (h.on_open) {
      h.on_open(opened);
    }
    for (const auto& e : send) {
      if (h.on_event) {
        h.on_event(e);
      }
    }
    stop.wait_for(std::chrono::seconds(30));
    return docker_engine::events_end::stopped;
  }
};

/// The registry behind the seams: records the test sets, and every release sent.
struct fake_registry_seams {
  std::mutex mutex;
  std::condition_variable released; ///< notified at each release sent
  std::vector<volume_record> records;
  std::vector<std::pair<std::string, mount_release>> sent;
  bool list_fails = false;

  docker_sync::record_source source() {
    return [this]() -> caf::expected<std::vector<volume_record>> {
      std::lock_guard<std::mutex> lock{mutex};
      if (list_fails) {
        return make_error(ec::timeout, "the registry did not list the Docker volumes");
      }
      return records;
    };
  }
  /// Drops the ID's whole count, as the volume would (no if_unchanged check here).
  docker_sync::release_sink sink() {
    return [this](const std::string& volume, const mount_release& r) -> caf::expected<uint32_t> {
      std::lock_guard<std::mutex> lock{mutex};
      sent.emplace_back(volume, r);
      released.notify_all();
      for (auto& rec : records) {
        if (rec.name == volume) {
          auto it = rec.mounts.find(r.id);
          if (it == rec.mounts.end()) {
            return uint32_t{0};
          }
          auto n = it->second;
          rec.mounts.erase(it);
          rec.origins.erase(r.id);
          return n;
        }
      }
      return make_error(ec::not_found, "no volume " + volume);
    };
  }
  std::vector<std::pair<std::string, mount_release>> releases() {
    std::lock_guard<std::mutex> lock{mutex};
    return sent;
  }
  /// Waits up to 5 s until `n` releases were sent: true once they were.
  bool wait_for_releases(size_t n) {
    std::unique_lock<std::mutex> lock{mutex};
    return released.wait_for(lock, std::chrono::seconds(5), [&] { return sent.size() >= n; });
  }
};

/// A Docker record of volume `name` counting `id` (count n) made by dockerd `by` at `ms`.
inline volume_record docker_record(const std::string& name, const std::string& id, uint32_t n,
                                   const std::string& by, int64_t ms) {
  volume_record rec;
  rec.name = name;
  rec.owner = record_owner::docker;
  rec.mounts[id] = n;
  rec.mounted = true;
  rec.origins[id] = mount_id_origin{by, ms};
  return rec;
}

using berth::test_support::captured_log;

} // namespace berth::test
