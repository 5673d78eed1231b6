#include "core/record_kind.hpp"

namespace berth {

std::string to_string(record_kind k) {
  switch (k) {
    case record_kind::volume:
      return "volume";
    case record_kind::snapshot:
      return "snapshot";
  }
  return "kind " + std::to_string(static_cast<int>(k)); // not a value of the enum
}

std::optional<record_kind> parse_record_kind(std::string_view s) {
  for (auto k : {record_kind::volume, record_kind::snapshot}) {
    if (s == to_string(k)) {
      return k;
    }
  }
  return std::nullopt;
}

std::string content_source::describe() const {
  if (empty()) {
    return "";
  }
  return to_string(kind) + ":" + name;
}

bool operator==(const content_source& a, const content_source& b) {
  if (a.empty() || b.empty()) {
    return a.empty() && b.empty();
  }
  return a.kind == b.kind && a.name == b.name;
}

std::optional<content_source> parse_content_source(std::string_view s) {
  if (s.empty()) {
    return content_source{};
  }
  auto colon = s.find(':');
  if (colon == std::string_view::npos || colon + 1 == s.size()) {
    return std::nullopt;
  }
  auto kind = parse_record_kind(s.substr(0, colon));
  if (!kind) {
    return std::nullopt;
  }
  return content_source{*kind, std::string{s.substr(colon + 1)}};
}

} // namespace berth
