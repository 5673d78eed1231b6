#pragma once

#include <string>
#include <string_view>

namespace berth {

/// True when `name` matches `[A-Za-z0-9][A-Za-z0-9_.-]{0,127}`: such a name is
/// one path component that can never leave the state root.
bool is_valid_volume_name(std::string_view name);

/// True for a Docker mount ID: 1..256 characters, none of them a control
/// character. IDs are map keys only, never part of a path.
bool is_valid_mount_id(std::string_view id);

} // namespace berth
