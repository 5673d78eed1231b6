#include "apps/berthd/health_sampler.hpp"

#include <utility>

#include <spdlog/spdlog.h>

#include "backends/block_backend.hpp"
#include "backends/loop_device.hpp"
#include "backends/mountinfo.hpp"
#include "core/errors.hpp"

namespace berth {

health_sampler::health_sampler(record_source records, std::shared_ptr<telemetry> stats,
                               std::chrono::milliseconds interval, observe_fn observe)
    : records_(std::move(records)), stats_(std::move(stats)), observe_(std::move(observe)),
      thread_(interval, [this] { sample_once(); }) {}

void health_sampler::sample_once() {
  auto recs = records_();
  if (!recs) {
    spdlog::debug("health: no sample this time: {}", describe(recs.error()));
    return; // the last conditions stay until the next sample
  }
  auto seen = observe_(*recs);
  if (!seen) {
    spdlog::warn("health: {}; the volumes' conditions stay as last seen", describe(seen.error()));
    return;
  }
  // A volume whose record changed while the host was read (a stage, a Mount, an unmount)
  // was read half before and half after: it keeps what was seen of it last round, rather
  // than a condition that lasts one round and is logged twice.
  auto after = records_();
  if (!after) {
    spdlog::debug("health: no sample this time: {}", describe(after.error()));
    return;
  }
  std::map<std::string, const volume_record*> now;
  for (const auto& rec : *after) {
    now.emplace(rec.name, &rec);
  }
  for (const auto& rec : *recs) {
    auto it = now.find(rec.name);
    if (it != now.end() && *it->second == rec) {
      continue;
    }
    seen->erase(rec.name);
    for (auto& c : stats_->health.of(rec.name)) {
      if (c.reason != abnormal_reason::call_hung) {
        (*seen)[rec.name].push_back(std::move(c));
      }
    }
  }
  stats_->health.replace_observed(std::move(*seen));
}

health_sampler::observe_fn block_conditions_of(const block_backend* block) {
  return [block](const std::vector<volume_record>& recs)
           -> caf::expected<std::map<std::string, volume_conditions>> {
    std::map<std::string, volume_conditions> seen;
    if (block == nullptr) {
      return seen;
    }
    block_backend::host_view host;
    host.loops = index_loop_devices();
    auto mounts = read_mountinfo();
    if (!mounts) {
      return mounts.error(); // without them every mount would look gone
    }
    for (auto& m : *mounts) {
      auto point = m.mount_point;
      host.mounts[point] = std::move(m); // in mount order: the topmost stays
    }
    for (const auto& rec : recs) {
      if (rec.backend != "block") {
        continue;
      }
      if (auto c = block->observe(rec, host); !c.empty()) {
        seen.emplace(rec.name, std::move(c));
      }
    }
    return seen;
  };
}

} // namespace berth
