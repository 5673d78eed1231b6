#pragma once

// The registry as blocking calls, for the node agent's threads (never an actor's): each
// call waits for the volume's transition to commit, as a CSI RPC would.

#include <optional>
#include <string>
#include <vector>

#include <caf/actor_system.hpp>
#include <caf/expected.hpp>

#include "actors/actors.hpp"

namespace berth::kube::agent {

class volume_desk {
public:
  volume_desk(caf::actor_system& sys, registry_actor registry);

  /// The CSI volume `name`; nullopt when there is none.
  caf::expected<std::optional<volume_record>> get(const std::string& name);

  /// CreateVolume or CreateSnapshot (spec.kind): the record made, or the one that exists
  /// with the same spec.
  caf::expected<volume_record> create(const std::string& name, volume_spec spec);

  /// Expand and modify, through the volume's coalescing mailbox.
  caf::expected<volume_record> modify(const std::string& name, modify_request change);

  /// DeleteVolume: removed, or there was none.
  caf::error remove(const std::string& name);

  /// The CSI snapshot `name`; nullopt when there is none.
  caf::expected<std::optional<volume_record>> get_snapshot(const std::string& name);

  /// DeleteSnapshot: removed, or there was none.
  caf::error remove_snapshot(const std::string& name);

  /// Every CSI volume.
  caf::expected<std::vector<volume_record>> volumes();
  /// Every CSI snapshot.
  caf::expected<std::vector<volume_record>> snapshots();

private:
  caf::expected<std::optional<volume_record>> get_kind(const std::string& name, record_kind kind);
  caf::error remove_kind(const std::string& name, record_kind kind);
  caf::expected<std::vector<volume_record>> records_of(record_kind kind);

  caf::actor_system& sys_;
  registry_actor registry_;
};

} // namespace berth::kube::agent
