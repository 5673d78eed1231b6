#pragma once

#include <string>
#include <string_view>

namespace berth {

/// The grammar of a volume or snapshot name, as every message that refuses one states it.
inline constexpr const char* volume_name_grammar = "[A-Za-z0-9][A-Za-z0-9_.-]{0,127}";

/// True when `name` matches volume_name_grammar: such a name is one path component that
/// can never leave the state root.
bool is_valid_volume_name(std::string_view name);

/// `invalid WHAT name "NAME": must match GRAMMAR`, the name quoted as client input:
/// what every layer says of a name that is not valid (`what`: "volume", "snapshot").
std::string invalid_name_message(std::string_view what, std::string_view name);

/// True for a Docker mount ID: 1..256 characters, none of them a control
/// character. IDs are map keys only, never part of a path.
bool is_valid_mount_id(std::string_view id);

} // namespace berth
