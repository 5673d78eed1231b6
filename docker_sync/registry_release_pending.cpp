// TEMPORARY, until branch issue11-volume is merged: the registry has no atom::release yet,
// so this sink refuses every release (each is logged as failed and tried again at the next
// reconciliation). At the merge, docker_sync/CMakeLists.txt builds registry_seams.cpp
// instead of this file, and this file is deleted.

#include "docker_sync/registry_seams.hpp"

#include "core/errors.hpp"

namespace berth::docker_sync {

release_sink make_registry_release_sink(caf::actor_system&, registry_actor) {
  return [](const std::string& volume, const mount_release& r) -> caf::expected<uint32_t> {
    return make_error(ec::unsupported, "volume " + volume + ": this berthd cannot release mount "
                                         "ID " + r.id + " yet (the volume's release transition "
                                         "is not built in)");
  };
}

} // namespace berth::docker_sync
