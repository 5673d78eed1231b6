// A block snapshot's image, opened for changed block tracking (block_ranges.hpp).

#include "backends/block_backend.hpp"
#include "core/errors.hpp"

namespace berth {

caf::expected<image_map> block_backend::open_snapshot_image(const volume_record& rec) const {
  if (rec.kind != record_kind::snapshot) {
    return make_error(ec::invalid_argument,
                      rec.name + " is a " + to_string(rec.kind) + ", not a snapshot");
  }
  auto path = image_path(rec);
  if (path.empty()) {
    return make_error(ec::invalid_argument, "snapshot name \"" + rec.name + "\" is not valid");
  }
  return image_map::open(path);
}

} // namespace berth
