#pragma once

#include <string>

namespace berth {

/// Sets spdlog's default logger: stderr (or `file`, appended to, when not ""),
/// "text" (readable) or "json" (one object per line: time, level, msg), at `level`.
/// A `file` that cannot be opened falls back to stderr, saying so.
void setup_logging(const std::string& format, const std::string& level,
                   const std::string& file = "");

} // namespace berth
