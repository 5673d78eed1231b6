#pragma once

// Records the machines' tests start from.

#include <memory>
#include <string>
#include <utility>

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

} // namespace berth::test
