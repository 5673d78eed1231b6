#pragma once

// The dockerd reconciliation's seams (seams.hpp) wired to berthd's registry actor. Both
// block the calling thread (the reconciliation's worker) in blocking_ask, for at most
// limits::docker_sync_registry_wait.

#include <caf/actor_system.hpp>

#include "actors/actors.hpp"
#include "protocols/docker/sync/seams.hpp"

namespace berth::docker_sync {

/// Lists the Docker records (registry: atom::list with record_owner::docker).
record_source make_registry_record_source(caf::actor_system& sys, registry_actor reg);

/// Sends atom::release (name, mount_release) to the registry and returns the count dropped.
release_sink make_registry_release_sink(caf::actor_system& sys, registry_actor reg);

} // namespace berth::docker_sync
