#pragma once

// What the node agent makes of a BerthVolume: the CSI request its spec stands for, the
// change it still asks of the volume, and the status that reports a record. Pure.

#include <cstdint>
#include <optional>
#include <string>

#include "core/csi_types.hpp"
#include "core/volume_record.hpp"
#include "protocols/kube/berth_objects.hpp"

namespace berth::kube::agent {

/// Takes "backend" out of an object's `parameters`: its value, else `default_backend`.
std::string take_backend(option_map& parameters, const std::string& default_backend);

/// The CreateVolume the spec stands for: its backend (parameters["backend"], else
/// `default_backend`), the other parameters, sizes, mutable parameters and source.
volume_spec create_request(const volume_object_spec& spec, const std::string& default_backend);

/// What the node last asked of the volume's actor (or found in its record).
struct requested {
  uint64_t bytes = 0;
  option_map parameters;
};

/// The change the spec asks beyond `asked`: a size above it, and the mutable parameters
/// whose values differ from it. nullopt when there is none.
std::optional<modify_request> change_request(const volume_object_spec& spec, const requested& asked);

/// The status that reports `rec` at `generation`: Ready, its capacity, parameters and
/// modifications, no failure.
volume_object_status ready_status(const volume_record& rec, int64_t generation);

/// The status of a failure at `generation`: `phase` (Failed for a create, Ready for a
/// change the volume survives, Deleting for a removal), the error's code and message,
/// and what `rec` still is (when there is a record).
volume_object_status failed_status(const std::string& phase, const caf::error& err,
                                   int64_t generation, const volume_record* rec);

} // namespace berth::kube::agent
