#pragma once

// Client input, IDs and times as they appear in messages and logs: shortened, quoted,
// checked for control characters; a time as RFC 3339. Shared by the codecs
// (protocols/docker, protocols/admin, protocols/csi), the backends' option checks and the
// actors' logs, so that one input reads the same whichever door it came through.

#include <chrono>
#include <cstddef>
#include <string>
#include <string_view>

namespace berth {

/// How many bytes of client input quote_input shows before it cuts with "...": enough
/// for any name, option key or mount ID whole, and the start of a long path or value.
inline constexpr size_t max_quoted_bytes = 200;

/// `text` in double quotes for an error message: `"` and `\` escaped with `\`, a control
/// character (below 0x20, and 0x7f) as \xNN, and cut after `max_bytes` input bytes with
/// "..." before the closing quote. A message about the length of the input itself (a
/// socket path too long for its address) passes a smaller bound: the start says which.
std::string quote_input(std::string_view text, size_t max_bytes = max_quoted_bytes);

/// The first 12 characters of a mount or container ID, as logs show it, with "…" when
/// that cut something off; a shorter ID whole.
std::string short_id(std::string_view id);

/// True when `s` holds a control character: a byte below 0x20, or 0x7f.
bool has_control_char(std::string_view s);

/// `t` as RFC 3339 in UTC, to the second (rounded down): "2026-12-01T12:50:56Z".
std::string rfc3339(std::chrono::system_clock::time_point t);

} // namespace berth
