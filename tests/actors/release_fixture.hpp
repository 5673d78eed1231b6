#pragma once

// What the release rules' tests share: a fake clock, two dockerd instances, two mount IDs
// and two containers, and short ways to build the engine view and ask decide_releases.

#include <chrono>
#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "actors/release_rules.hpp"

namespace berth::test {

inline const release_clock::time_point epoch{std::chrono::seconds(1'800'000'000)};

/// `s` seconds on the fake clock.
inline release_clock::time_point at(std::chrono::milliseconds s) {
  return epoch + s;
}

inline const dockerd_key old_dockerd = "4242@1000";
inline const dockerd_key new_dockerd = "5151@2000";

inline const std::string id_a = "aaaa1111aaaa1111aaaa1111aaaa1111";
inline const std::string id_b = "bbbb2222bbbb2222bbbb2222bbbb2222";
inline const std::string ctr_c = "cccc3333cccc3333cccc3333";
inline const std::string ctr_d = "dddd4444dddd4444dddd4444";

inline mount_id_state counted(const std::string& id, uint32_t n, const dockerd_key& by,
                              std::chrono::milliseconds mounted_at) {
  return mount_id_state{id, n, by, at(mounted_at)};
}

inline container_info ctr(const std::string& id, container_state state,
                          std::vector<std::string> volumes = {"kv"}) {
  return container_info{id, state, std::move(volumes)};
}

/// The new dockerd runs and listed `containers` at `listed_at`; no map, no events.
inline engine_view dockerd_now(std::vector<container_info> containers,
                               std::chrono::milliseconds listed_at = std::chrono::seconds{1000}) {
  engine_view v;
  v.current = new_dockerd;
  v.list = container_list{new_dockerd, at(listed_at), std::move(containers)};
  return v;
}

inline engine_view with_map(engine_view v, std::map<std::string, std::string> map) {
  v.container_of = std::move(map);
  return v;
}

inline engine_view with_event(engine_view v, container_event::kind_t kind, const std::string& cid,
                              std::chrono::milliseconds when) {
  v.events.push_back(container_event{kind, cid, at(when)});
  return v;
}

inline std::vector<release> decide(const std::vector<mount_id_state>& ids, const engine_view& v,
                                   std::chrono::milliseconds now = std::chrono::seconds{2000},
                                   std::chrono::milliseconds grace = default_die_grace) {
  return decide_releases("kv", ids, v, at(now), grace);
}

/// The one release expected, by reason.
inline ::testing::AssertionResult is_one(const std::vector<release>& out, const std::string& id,
                                         release_reason reason) {
  if (out.size() != 1) {
    return ::testing::AssertionFailure() << out.size() << " releases, expected one of " << id;
  }
  if (out[0].id != id || out[0].reason != reason) {
    return ::testing::AssertionFailure() << "released " << out[0].log;
  }
  return ::testing::AssertionSuccess();
}

} // namespace berth::test
