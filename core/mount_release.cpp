#include "core/mount_release.hpp"

namespace berth {

const char* to_string(release_reason reason) {
  switch (reason) {
    case release_reason::stale_instance:
      return "stale_instance";
    case release_reason::container_gone:
      return "container_gone";
    case release_reason::died:
      return "died";
    case release_reason::operator_request:
      return "operator";
  }
  return "other";
}

const std::vector<std::string>& release_reason_names() {
  static const std::vector<std::string> names{
    to_string(release_reason::stale_instance), to_string(release_reason::container_gone),
    to_string(release_reason::died), to_string(release_reason::operator_request)};
  return names;
}

} // namespace berth
