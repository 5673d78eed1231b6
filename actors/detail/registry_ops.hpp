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

/// The backend `rec` names, or the default one.
const std::shared_ptr<backend>& storage_of(const registry_config& cfg, const volume_record& rec);

/// A volume actor for `rec`; `exists` for a loaded record, which reconciles first.
volume_actor spawn_volume(self_ptr self, std::shared_ptr<const volume_record> rec, bool exists);

/// Gives dormant `entry` of `name` its actor, which starts from the dormant record,
/// already counted and reconciled.
void wake(self_ptr self, const std::string& name, registry_entry& entry);

/// The entry of a created (or being created) volume, with its actor (a dormant one is
/// woken), or nullptr.
registry_entry* find(self_ptr self, const std::string& name);

/// Drops a name whose actor holds no volume and no pending creation, once the actor has
/// settled (registry.cpp says why).
void forget_if_unused(self_ptr self, const std::string& name, const volume_actor& hdl);

/// Docker Create: `-o backend=` picks the backend; `-o from-snapshot=`/`-o clone-of=`
/// copy Docker's source on its backend. Answers `rp`.
void create_docker(self_ptr self, const std::string& name, option_map options,
                   reply_to<atom::ok> rp);

/// A copy of `source` (a snapshot, clone or export of it) ended: it may be removed again
/// once no other is in progress.
void end_copy(self_ptr self, const std::string& source);

/// berthctl import's checks: a valid free name, options an import may take and the
/// backend they pick accepts. Returns that backend's name; changes nothing.
caf::expected<std::string> check_import(self_ptr self, const std::string& name,
                                        const option_map& options);

/// berthctl import: check_import, then Docker volume `name` created from the staging
/// directory `tree` (the volume actor's create with a tree).
caf::result<atom::ok> create_import(self_ptr self, const std::string& name, option_map& options,
                                    const std::string& tree);

/// berthctl export of Docker volume `name` as `id`: counted as a copy of it until
/// export_close (so it cannot be removed meanwhile).
caf::result<export_view> open_export(self_ptr self, const std::string& name, std::string id,
                                     export_form form);
caf::result<atom::ok> close_export(self_ptr self, const std::string& name, std::string id);

/// CSI CreateVolume/CreateSnapshot (and berthctl snapshot create, in Docker's namespace).
/// Answers `rp`.
void create_csi(self_ptr self, const std::string& name, volume_spec spec,
                reply_to<volume_record> rp);

} // namespace berth::registry_detail
