// The release seam on the real registry: the reconciliation's worker thread waits for the
// volume's answer (bounded), never an actor.

#include "protocols/docker/sync/registry_seams.hpp"

#include "actors/blocking_ask.hpp"
#include "core/limits.hpp"

namespace berth::docker_sync {

release_sink make_registry_release_sink(caf::actor_system& sys, registry_actor reg) {
  return [&sys, reg](const std::string& volume,
                     const mount_release& r) -> caf::expected<uint32_t> {
    return blocking_ask<uint32_t>(sys, reg, limits::docker_sync_registry_wait,
                                  "volume " + volume + ", asked to release mount ID " + r.id
                                    + ",",
                                  atom::release_v, volume, r);
  };
}

} // namespace berth::docker_sync
