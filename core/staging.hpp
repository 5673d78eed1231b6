#pragma once

// How a record says its volume is staged, shared by the volume actor's CSI rules and
// the start-up reconciliation (which restages what a restart lost).

#include "core/csi_types.hpp"
#include "core/volume_record.hpp"

namespace berth {

/// Clears `next`'s staging (path, mode, flags, device).
void set_unstaged(volume_record& next);

/// The request that stages the volume again the way its record says it is staged
/// (undoing an unstage, reconcile): path, block or mount, flags and fs_type.
stage_request staged_as(const volume_record& rec);

} // namespace berth
