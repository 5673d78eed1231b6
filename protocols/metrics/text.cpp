#include "protocols/metrics/text.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <system_error>

namespace berth::metrics {

namespace {

/// A letter or an underscore: what a name may start with.
bool is_letter(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}

bool is_digit(char c) {
  return c >= '0' && c <= '9';
}

} // namespace

bool is_utf8(std::string_view s) {
  size_t i = 0;
  while (i < s.size()) {
    auto c = static_cast<unsigned char>(s[i]);
    size_t len = 0;
    uint32_t cp = 0;
    if (c < 0x80) {
      ++i;
      continue;
    } else if ((c & 0xE0) == 0xC0) {
      len = 2;
      cp = c & 0x1F;
    } else if ((c & 0xF0) == 0xE0) {
      len = 3;
      cp = c & 0x0F;
    } else if ((c & 0xF8) == 0xF0) {
      len = 4;
      cp = c & 0x07;
    } else {
      return false;
    }
    if (i + len > s.size()) {
      return false;
    }
    for (size_t k = 1; k < len; ++k) {
      auto cc = static_cast<unsigned char>(s[i + k]);
      if ((cc & 0xC0) != 0x80) {
        return false;
      }
      cp = (cp << 6) | (cc & 0x3F);
    }
    static constexpr uint32_t least[] = {0, 0, 0x80, 0x800, 0x10000};
    if (cp < least[len] || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) {
      return false;
    }
    i += len;
  }
  return true;
}

bool is_valid_metric_name(std::string_view name) {
  if (name.empty() || !(is_letter(name[0]) || name[0] == ':')) {
    return false;
  }
  return std::all_of(name.begin(), name.end(),
                     [](char c) { return is_letter(c) || is_digit(c) || c == ':'; });
}

bool is_valid_label_name(std::string_view name) {
  if (name.empty() || !is_letter(name[0]) || name.substr(0, 2) == "__") {
    return false;
  }
  return std::all_of(name.begin(), name.end(), [](char c) { return is_letter(c) || is_digit(c); });
}

std::string escape_help(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    if (c == '\\') {
      out += "\\\\";
    } else if (c == '\n') {
      out += "\\n";
    } else {
      out += c;
    }
  }
  return out;
}

std::string escape_label_value(std::string_view value) {
  std::string out;
  out.reserve(value.size());
  for (char c : value) {
    if (c == '\\') {
      out += "\\\\";
    } else if (c == '"') {
      out += "\\\"";
    } else if (c == '\n') {
      out += "\\n";
    } else {
      out += c;
    }
  }
  return out;
}

std::string format_value(double value) {
  if (std::isnan(value)) {
    return "NaN";
  }
  if (std::isinf(value)) {
    return value > 0 ? "+Inf" : "-Inf";
  }
  constexpr double exact_limit = 9007199254740992.0; // 2^53: every integer up to it is a double
  if (value == std::trunc(value) && std::fabs(value) <= exact_limit) {
    return std::to_string(static_cast<int64_t>(value));
  }
  // Shortest digits that read back as this double, spelled as Go's FormatFloat(v, 'g',
  // -1) does (what Prometheus's own clients write): plain decimals from 1e-4 up, an
  // exponent below that and for integers past 2^53 (whose last digits are not exact).
  char sci[64];
  auto res = std::to_chars(sci, sci + sizeof(sci), value, std::chars_format::scientific);
  std::string text(sci, res.ptr);
  auto exponent = std::atoi(text.c_str() + text.find('e') + 1);
  if (value == std::trunc(value) || exponent < -4) {
    return text;
  }
  char fixed[64]; // |value| < 2^53 and >= 1e-4 here: at most 17 digits, a sign, "0.000"
  res = std::to_chars(fixed, fixed + sizeof(fixed), value, std::chars_format::fixed);
  return std::string(fixed, res.ptr);
}

} // namespace berth::metrics
