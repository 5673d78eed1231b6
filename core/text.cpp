#include "core/text.hpp"

#include <algorithm>
#include <cstdio>
#include <ctime>

namespace berth {

namespace {

bool is_control(char c) {
  auto u = static_cast<unsigned char>(c);
  return u < 0x20 || u == 0x7f;
}

} // namespace

std::string quote_input(std::string_view text, size_t max_bytes) {
  std::string out = "\"";
  size_t n = 0;
  for (char c : text) {
    if (++n > max_bytes) {
      out += "...";
      break;
    }
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (is_control(c)) {
      char hex[8];
      std::snprintf(hex, sizeof(hex), "\\x%02x", static_cast<unsigned char>(c));
      out += hex;
    } else {
      out += c;
    }
  }
  out += '"';
  return out;
}

std::string short_id(std::string_view id) {
  constexpr size_t shown = 12;
  return id.size() > shown ? std::string{id.substr(0, shown)} + "…" : std::string{id};
}

bool has_control_char(std::string_view s) {
  return std::any_of(s.begin(), s.end(), is_control);
}

std::string rfc3339(std::chrono::system_clock::time_point t) {
  auto secs = std::chrono::floor<std::chrono::seconds>(t.time_since_epoch());
  auto tt = static_cast<std::time_t>(secs.count());
  std::tm tm{};
  gmtime_r(&tt, &tm);
  char buf[32];
  std::strftime(buf, sizeof(buf), "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

} // namespace berth
