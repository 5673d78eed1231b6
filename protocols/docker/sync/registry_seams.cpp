// The release seam on the real registry: the reconciliation's worker thread waits for the
// volume's answer (bounded), never an actor.

#include "protocols/docker/sync/registry_seams.hpp"

#include <caf/scoped_actor.hpp>

#include "core/errors.hpp"
#include "core/limits.hpp"

namespace berth::docker_sync {

release_sink make_registry_release_sink(caf::actor_system& sys, registry_actor reg) {
  return [&sys, reg](const std::string& volume,
                     const mount_release& r) -> caf::expected<uint32_t> {
    caf::scoped_actor self{sys};
    caf::expected<uint32_t> out{make_error(
      ec::timeout, "volume " + volume + " did not answer the release of mount ID " + r.id
                     + " within " + std::to_string(limits::docker_sync_registry_wait.count())
                     + " ms (it may still be applied)")};
    self->request(reg, caf::duration{limits::docker_sync_registry_wait}, atom::release_v, volume, r)
      .receive([&](uint32_t dropped) { out = dropped; },
               [&](caf::error& err) { out = std::move(err); });
    return out;
  };
}

} // namespace berth::docker_sync
