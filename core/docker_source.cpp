#include "core/docker_source.hpp"

#include "core/errors.hpp"
#include "core/names.hpp"
#include "core/text.hpp"

namespace berth {

caf::expected<content_source> docker_content_source(const std::string& volume,
                                                    const option_map& options) {
  auto snapshot = options.find(docker_from_snapshot_key);
  auto clone = options.find(docker_clone_of_key);
  if (snapshot != options.end() && clone != options.end()) {
    return make_error(ec::invalid_argument,
                      "volume " + volume + ": give one of options from-snapshot and clone-of, "
                      "not both");
  }
  auto given = snapshot != options.end() ? snapshot : clone;
  if (given == options.end()) {
    return content_source{};
  }
  if (!is_valid_volume_name(given->second)) {
    return make_error(ec::invalid_argument,
                      "option " + given->first + "=" + quote_input(given->second) + " of volume "
                        + volume + " is not a name (" + volume_name_grammar + ")");
  }
  if (given->second == volume) {
    return make_error(ec::invalid_argument, "option " + given->first + " of volume " + volume
                                              + " names the volume itself");
  }
  return snapshot != options.end() ? snapshot_source(given->second)
                                   : volume_source(given->second);
}

} // namespace berth
