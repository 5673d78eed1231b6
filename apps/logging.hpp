#pragma once

#include <string>

namespace berth {

/// Sets spdlog's default logger: stderr, "text" (readable) or "json" (one
/// object per line: time, level, msg), at `level`.
void setup_logging(const std::string& format, const std::string& level);

} // namespace berth
