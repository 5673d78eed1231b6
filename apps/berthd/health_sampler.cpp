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
