#pragma once

// The dockerd reconciliation's seams (seams.hpp) wired to berthd's registry actor. Both
// block the calling thread (the reconciliation's worker) on a scoped_actor, for at most
// limits::docker_sync_registry_wait.

#include <caf/actor_system.hpp>

#include "actors/actors.hpp"
#include "docker_sync/seams.hpp"

namespace berth::docker_sync {

/// Lists the Docker records (registry: atom::list with owner_docker).
record_source make_registry_record_source(caf::actor_system& sys, registry_actor reg);

/// Sends atom::release (name, mount_release) to the registry and returns the count dropped.
/// Until branch issue11-volume (the release transition) is merged, the one built is
/// registry_release_pending.cpp, whose sink refuses every release; registry_seams.cpp holds
/// the real one (see docker_sync/CMakeLists.txt).
release_sink make_registry_release_sink(caf::actor_system& sys, registry_actor reg);

} // namespace berth::docker_sync
