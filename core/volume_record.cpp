#include "core/volume_record.hpp"

#include <ctime>

namespace berth {

uint64_t total_mounts(const volume_record& rec) {
  uint64_t sum = 0;
  for (const auto& [id, count] : rec.mounts) {
    sum += count;
  }
  return sum;
}

bool operator==(const volume_record& a, const volume_record& b) {
  return a.name == b.name && a.backend == b.backend && a.options == b.options
         && a.created_at == b.created_at && a.mounts == b.mounts
         && a.mounted == b.mounted && a.mountpoint == b.mountpoint;
}

std::string now_rfc3339() {
  std::time_t t = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof(buf), "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

} // namespace berth
