#include "core/record_owner.hpp"

namespace berth {

std::string to_string(record_owner o) {
  switch (o) {
    case record_owner::unset:
      return "";
    case record_owner::docker:
      return "docker";
    case record_owner::csi:
      return "csi";
  }
  return "owner " + std::to_string(static_cast<int>(o)); // not a value of the enum
}

std::optional<record_owner> parse_record_owner(std::string_view s) {
  for (auto o : {record_owner::unset, record_owner::docker, record_owner::csi}) {
    if (s == to_string(o)) {
      return o;
    }
  }
  return std::nullopt;
}

} // namespace berth
