#pragma once

// What the node agent makes of a BerthSnapshot: the CreateSnapshot its spec stands for,
// and the status that reports a snapshot's record or a failure. Pure.

#include <string>

#include <caf/error.hpp>

#include "core/csi_types.hpp"
#include "core/volume_record.hpp"
#include "protocols/kube/snapshot_objects.hpp"

namespace berth::kube::agent {

/// The CreateSnapshot the spec stands for: a snapshot of the CSI volume spec.sourceVolume,
/// on the backend parameters["backend"] (else `default_backend`), with the other parameters.
volume_spec snapshot_request(const snapshot_object_spec& spec, const std::string& default_backend);

/// The status that reports the snapshot `rec` at `generation`: Ready to use, its size and
/// when it was cut.
snapshot_object_status snapshot_ready(const volume_record& rec, int64_t generation);

/// The status of a failure at `generation`: `phase` (Failed for a cut, Deleting for a
/// removal), the error's code and message.
snapshot_object_status snapshot_failed(const std::string& phase, const caf::error& err,
                                       int64_t generation);

} // namespace berth::kube::agent
