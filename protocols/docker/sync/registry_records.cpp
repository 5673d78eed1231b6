#include "protocols/docker/sync/registry_seams.hpp"

#include "actors/blocking_ask.hpp"
#include "core/limits.hpp"

namespace berth::docker_sync {

record_source make_registry_record_source(caf::actor_system& sys, registry_actor reg) {
  return [&sys, reg]() -> caf::expected<std::vector<volume_record>> {
    auto shared = blocking_ask<shared_records>(sys, reg, limits::docker_sync_registry_wait,
                                               "the registry, asked for the Docker volumes,",
                                               atom::list_v, record_owner::docker);
    if (!shared) {
      return shared.error();
    }
    return copies(*shared);
  };
}

} // namespace berth::docker_sync
