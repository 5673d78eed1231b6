#include "apps/berthd/usage_sampler.hpp"

#include <cerrno>
#include <cstring>
#include <utility>

#include <sys/statvfs.h>

#include <spdlog/spdlog.h>

#include "backends/block_backend.hpp"
#include "backends/loop_device.hpp"
#include "core/errors.hpp"

namespace berth {

std::string measured_path(const volume_record& rec) {
  if (rec.backend != "block" || rec.kind != record_kind::volume) {
    return {};
  }
  if (rec.mounted && !rec.mountpoint.empty()) {
    return rec.mountpoint; // a Docker block volume
  }
  if (!rec.staging_path.empty() && !rec.staged_block) {
    return rec.staging_path; // a CSI block volume staged as a filesystem
  }
  return {};
}

caf::expected<uint64_t> used_bytes_at(const std::string& path) {
  struct statvfs vfs {};
  if (::statvfs(path.c_str(), &vfs) != 0) {
    int e = errno;
    return make_error(ec::backend_failure, "statvfs of " + path + ": " + std::strerror(e));
  }
  return static_cast<uint64_t>(vfs.f_blocks - vfs.f_bfree) * vfs.f_frsize;
}

usage_sampler::usage_sampler(record_source records, std::shared_ptr<telemetry> stats,
                             size_t max_series, std::chrono::milliseconds interval,
                             measure_fn measure, images_fn images)
    : records_(std::move(records)), stats_(std::move(stats)), max_series_(max_series),
      measure_(std::move(measure)), images_(std::move(images)),
      thread_(interval, [this] { sample_once(); }) {}

void usage_sampler::sample_once() {
  auto recs = records_();
  if (!recs) {
    spdlog::debug("usage: no sample this time: {}", describe(recs.error()));
    return; // the last figures stay until the next sample
  }
  volume_usage::table figures;
  std::vector<volume_record> measured;
  uint64_t omitted = 0;
  for (const auto& rec : *recs) { // sorted by name: the bound keeps the first ones
    auto path = measured_path(rec);
    if (path.empty()) {
      continue;
    }
    if (figures.size() >= max_series_) {
      ++omitted;
      continue;
    }
    auto used = measure_(path);
    if (!used) {
      spdlog::debug("usage of volume {}: {}", rec.name, describe(used.error()));
      continue;
    }
    figures[rec.name] = volume_usage_figure{*used, rec.capacity_bytes};
    measured.push_back(rec);
  }
  if (images_) {
    images_(measured, figures);
  }
  stats_->usage.replace(std::move(figures), omitted);
}

usage_sampler::images_fn image_figures_of(const block_backend* block) {
  return [block](const std::vector<volume_record>& recs, volume_usage::table& figures) {
    if (block == nullptr) {
      return;
    }
    auto attached = index_loop_devices();
    for (const auto& rec : recs) {
      auto image = block->image_state_of(rec, attached);
      if (!image) {
        continue;
      }
      auto& f = figures[rec.name];
      f.allocated_bytes = image->allocated_bytes;
      f.direct_io = image->device.empty() ? direct_io_state::unknown
                    : image->direct_io   ? direct_io_state::on
                                         : direct_io_state::off;
    }
  };
}

} // namespace berth
