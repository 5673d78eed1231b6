#pragma once

// Records the machines' tests start from, and how many volumes the gauges count.

#include <cstdint>
#include <memory>
#include <string>
#include <utility>

#include "core/telemetry/telemetry.hpp"
#include "core/volume_record.hpp"

namespace berth::test {

/// A Docker volume of the local backend named `name`, with nothing else set.
inline volume_record named(std::string name) {
  volume_record r;
  r.name = std::move(name);
  r.backend = "local";
  r.owner = record_owner::docker;
  return r;
}

/// named(name), as the one shared record a committed_record starts from.
inline std::shared_ptr<const volume_record> shared_named(std::string name) {
  return std::make_shared<const volume_record>(named(std::move(name)));
}

/// The volumes `gauges` count, over every backend and kind.
inline int64_t counted_volumes(const volume_gauges& gauges) {
  int64_t n = 0;
  for (const auto& row : gauges.snapshot()) {
    n += row.volumes;
  }
  return n;
}

} // namespace berth::test
