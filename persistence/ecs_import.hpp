#pragma once

#include <string>

#include <caf/expected.hpp>

#include "persistence/store.hpp"

namespace berth {

/// Reads amazon-ecs-volume-plugin's state file:
/// {"volumes":{NAME:{"type","path","options":{...},"createdAt","mounts":{ID:null|N}}}}.
/// A null or 0 count becomes 1 (docs/design.md, "Old state files load"); the host path is
/// kept as the mountpoint, so running tasks keep their mounts. The result is marked
/// `imported` (same boot).
caf::expected<state_snapshot> import_ecs_state(const std::string& path);

} // namespace berth
