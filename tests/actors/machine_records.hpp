#pragma once

// Records the machines' tests start from.

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

} // namespace berth::test
