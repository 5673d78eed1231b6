// The values berthctl's commands and options take, checked: a size (resize), seconds
// (--interval, --timeout). Each refusal is a usage error that names the text.

#include "apps/berthctl/berthctl_cli.hpp"
#include "apps/berthctl/berthctl_failure.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>

#include "core/byte_size.hpp"
#include "core/limits.hpp"
#include "core/text.hpp"

namespace berth::cli {

namespace {

/// Seconds as --interval and --timeout take them, between `min` and `max`.
caf::expected<std::chrono::milliseconds> parse_seconds(const char* flag, std::string_view text,
                                                       std::chrono::milliseconds min_ms,
                                                       std::chrono::milliseconds max_ms) {
  auto bad = [&](const std::string& why) {
    return bad_usage(std::string{"invalid "} + flag + " " + quote_input(text) + ": " + why);
  };
  const std::string s{text};
  bool plain = !s.empty() && std::all_of(s.begin(), s.end(), [](char c) {
    return (c >= '0' && c <= '9') || c == '.';
  });
  char* end = nullptr;
  double secs = plain ? std::strtod(s.c_str(), &end) : 0;
  if (!plain || end != s.c_str() + s.size() || !std::isfinite(secs)) {
    return bad("give seconds, e.g. 1 or 0.5");
  }
  auto min = min_ms.count() / 1000.0;
  auto max = max_ms.count() / 1000.0;
  if (secs < min || secs > max) {
    char buf[96];
    std::snprintf(buf, sizeof(buf), "give between %g and %g seconds", min, max);
    return bad(buf);
  }
  return std::chrono::milliseconds{static_cast<int64_t>(std::llround(secs * 1000))};
}

} // namespace

caf::expected<std::chrono::milliseconds> parse_interval(std::string_view text) {
  return parse_seconds("--interval", text, limits::min_top_interval, limits::max_top_interval);
}

caf::expected<std::chrono::milliseconds> parse_timeout(std::string_view text) {
  return parse_seconds("--timeout", text, limits::min_cli_timeout, limits::max_cli_timeout);
}

caf::expected<uint64_t> parse_size(std::string_view text) {
  auto size = parse_byte_size(text);
  switch (size.problem) {
    case size_problem::none:
      return size.bytes;
    case size_problem::zero:
      return bad_usage("size " + quote_input(text) + " must be positive");
    case size_problem::too_large:
      return bad_usage("size " + quote_input(text) + " is too large: at most "
                       + std::to_string(UINT64_MAX) + " bytes");
    case size_problem::not_a_size:
      break;
  }
  return bad_usage("invalid size " + quote_input(text) + ": " + byte_size_grammar);
}

} // namespace berth::cli
