#include "apps/berthctl/berthctl_inspect.hpp"

#include <chrono>

#include "core/text.hpp"

namespace berth::cli {

std::string format_mounted_at(int64_t ms) {
  if (ms <= 0) {
    return "unknown";
  }
  return rfc3339(std::chrono::system_clock::time_point{std::chrono::milliseconds{ms}});
}

std::string format_mount_ids(const volume_record& rec) {
  std::string out;
  for (const auto& [id, count] : rec.mounts) {
    mount_id_origin origin;
    if (auto it = rec.origins.find(id); it != rec.origins.end()) {
      origin = it->second;
    }
    out += "  " + id + ": count " + std::to_string(count) + ", dockerd "
           + (origin.dockerd.empty() ? std::string{"unknown"} : origin.dockerd)
           + ", last mounted " + format_mounted_at(origin.last_mounted_ms) + "\n";
  }
  return out;
}

} // namespace berth::cli
