#pragma once

// Which two snapshots a delta compares (docs/design.md, "Changed block tracking"): the CSI
// SnapshotMetadata service and berthctl snapshot diff refuse the same pairs in the same words.

#include <string_view>

#include <caf/error.hpp>

#include "core/volume_record.hpp"

namespace berth {

/// Nothing when `target` may be compared with `base`: two snapshots of one volume, `base`
/// taken no later. Otherwise ec::invalid_argument naming both, each introduced by its label
/// ("base_snapshot_id", "base snapshot", ...), and what to ask instead.
caf::error check_delta_pair(const volume_record& base, const volume_record& target,
                            std::string_view base_label, std::string_view target_label);

} // namespace berth
