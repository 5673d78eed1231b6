#include "core/telemetry/volume_usage.hpp"

#include <utility>

namespace berth {

void volume_usage::replace(table figures, uint64_t omitted) {
  std::lock_guard<std::mutex> guard{mtx_};
  figures_ = std::move(figures);
  omitted_ = omitted;
}

volume_usage::table volume_usage::snapshot() const {
  std::lock_guard<std::mutex> guard{mtx_};
  return figures_;
}

std::optional<volume_usage_figure> volume_usage::of(const std::string& volume) const {
  std::lock_guard<std::mutex> guard{mtx_};
  auto it = figures_.find(volume);
  if (it == figures_.end()) {
    return std::nullopt;
  }
  return it->second;
}

uint64_t volume_usage::omitted() const {
  std::lock_guard<std::mutex> guard{mtx_};
  return omitted_;
}

} // namespace berth
