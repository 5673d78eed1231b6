#include "protocols/docker/sync/registry_seams.hpp"

#include <caf/scoped_actor.hpp>

#include "core/errors.hpp"
#include "core/limits.hpp"

namespace berth::docker_sync {

record_source make_registry_record_source(caf::actor_system& sys, registry_actor reg) {
  return [&sys, reg]() -> caf::expected<std::vector<volume_record>> {
    caf::scoped_actor self{sys};
    caf::expected<std::vector<volume_record>> out{
      make_error(ec::timeout, "the registry did not list the Docker volumes")};
    self
      ->request(reg, caf::duration{limits::docker_sync_registry_wait}, atom::list_v,
                record_owner::docker)
      .receive([&](std::vector<volume_record>& recs) { out = std::move(recs); },
               [&](caf::error& err) { out = std::move(err); });
    return out;
  };
}

} // namespace berth::docker_sync
