#pragma once

#include <cstdint>
#include <map>
#include <string>

#include <caf/meta/type_name.hpp>

namespace berth {

/// Driver options as Docker sends them (`-o key=value`).
using option_map = std::map<std::string, std::string>;

/// Mount ID -> how many Mounts with that ID are outstanding (DESIGN bug 2).
using mount_counts = std::map<std::string, uint32_t>;

/// Everything berth knows about one volume; the unit of persistence.
struct volume_record {
  std::string name;
  std::string backend = "local";
  option_map options;
  std::string created_at; ///< RFC 3339, UTC
  mount_counts mounts;
  bool mounted = false;   ///< the host mount exists (made at first Mount)
  std::string mountpoint; ///< where it is mounted on the host, while mounted
};

/// Sum of all mount-ID counts.
uint64_t total_mounts(const volume_record& rec);

bool operator==(const volume_record& a, const volume_record& b);
inline bool operator!=(const volume_record& a, const volume_record& b) {
  return !(a == b);
}

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, volume_record& x) {
  return f(caf::meta::type_name("volume_record"), x.name, x.backend, x.options,
           x.created_at, x.mounts, x.mounted, x.mountpoint);
}

/// Current time as RFC 3339 UTC, e.g. "2026-11-30T18:00:00Z".
std::string now_rfc3339();

} // namespace berth
