#pragma once

// What the dockerd reconciliation needs from berthd's registry, as two functions, so that
// docker_sync builds and is tested without actors: apps/berthd/daemon.cpp wires them to the
// registry (protocols/docker/sync/registry_seams.hpp), the tests to fakes. Both are called on the
// reconciliation's own thread and may block (never an actor's or a Beast session's).

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include <caf/expected.hpp>

#include "actors/release_rules.hpp"
#include "core/volume_record.hpp"

namespace berth::docker_sync {

/// Every Docker record (owner docker), as committed now.
using record_source = std::function<caf::expected<std::vector<volume_record>>()>;

/// Sends one release of Docker volume `volume` (the registry's atom::release) and returns
/// the count the volume dropped (0: nothing, e.g. a Mount came since), or its error.
using release_sink =
  std::function<caf::expected<uint32_t>(const std::string& volume, const mount_release& r)>;

} // namespace berth::docker_sync
