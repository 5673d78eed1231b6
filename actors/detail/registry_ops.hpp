#pragma once

// What the registry's two files share (registry.cpp: names, removal, listing and the
// behaviour; registry_create.cpp: creation, with or without a content source).

#include <string>

#include <caf/error.hpp>

#include "actors/registry.hpp"

namespace berth::registry_detail {

using self_ptr = registry_actor::stateful_pointer<registry_state>;

/// ec::invalid_argument naming the name and its grammar.
caf::error bad_name(const std::string& name);

/// A volume actor for `rec`; `exists` for a loaded record, which reconciles first.
volume_actor spawn_volume(self_ptr self, volume_record rec, bool exists);

/// The actor of a created (or being created) volume, or nullptr.
registry_entry* find(self_ptr self, const std::string& name);

/// Drops a name whose actor holds no volume and no pending creation, once the actor has
/// settled (registry.cpp says why).
void forget_if_unused(self_ptr self, const std::string& name, const volume_actor& hdl);

/// Docker Create: `-o backend=` picks the backend; `-o from-snapshot=`/`-o clone-of=`
/// copy Docker's source on its backend.
caf::result<atom::ok> create_docker(self_ptr self, const std::string& name, option_map& options);

/// CSI CreateVolume/CreateSnapshot (and berthctl snapshot create, in Docker's namespace).
caf::result<volume_record> create_csi(self_ptr self, const std::string& name, volume_spec spec);

} // namespace berth::registry_detail
