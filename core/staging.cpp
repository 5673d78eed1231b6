#include "core/staging.hpp"

namespace berth {

void set_unstaged(volume_record& next) {
  next.staging_path.clear();
  next.staged_block = false;
  next.stage_flags.clear();
  next.stage_fs_type.clear();
  next.device.clear();
}

stage_request staged_as(const volume_record& rec) {
  stage_request req;
  req.staging_path = rec.staging_path;
  req.block = rec.staged_block;
  req.flags = rec.stage_flags;
  req.fs_type = rec.stage_fs_type;
  return req;
}

} // namespace berth
