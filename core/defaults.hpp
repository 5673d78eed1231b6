#pragma once

// Defaults that more than one program must agree on.

namespace berth::defaults {

/// berthd's admin socket: where berthctl, berth-bench and berthd prestop look for it.
inline constexpr const char* admin_socket = "/run/berth/admin.sock";

} // namespace berth::defaults
