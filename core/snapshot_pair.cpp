#include "core/snapshot_pair.hpp"

#include <string>

#include "core/errors.hpp"
#include "core/text.hpp"

namespace berth {

caf::error check_delta_pair(const volume_record& base, const volume_record& target,
                            std::string_view base_label, std::string_view target_label) {
  auto named = [](std::string_view label, const volume_record& rec) {
    return std::string{label} + " " + quote_input(rec.name);
  };
  if (base.source.name != target.source.name) {
    return make_error(ec::invalid_argument,
                      named(base_label, base) + " is a snapshot of volume "
                        + quote_input(base.source.name) + " and " + named(target_label, target)
                        + " of volume " + quote_input(target.source.name)
                        + ": a delta is between two snapshots of one volume");
  }
  // RFC 3339 in UTC, one format: their order is the order of the strings.
  if (base.created_at > target.created_at) {
    return make_error(ec::invalid_argument,
                      named(base_label, base) + " (taken " + base.created_at + ") is newer than "
                        + named(target_label, target) + " (taken " + target.created_at
                        + "): name the older one as the base");
  }
  return {};
}

} // namespace berth
