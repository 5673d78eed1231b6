// block_backend, node side: publish and unpublish, a bind of the staged filesystem (or of
// the loop device, for raw block) on the target, through bind_publish. Stage and unstage:
// block_node.cpp.

#include "backends/block_backend.hpp"

#include <spdlog/spdlog.h>
#include <sys/mount.h>

#include "backends/bind_publish.hpp"
#include "backends/detail/block_helpers.hpp"
#include "backends/detail/block_mount_flags.hpp"
#include "backends/loop_device.hpp"
#include "backends/mountinfo.hpp"
#include "core/errors.hpp"

namespace berth {

caf::expected<bool> block_backend::publish(const volume_record& rec, const std::string& target,
                                           const publication& how) {
  auto image = checked_image(rec);
  if (!image) {
    return image.error();
  }
  const std::string what = block_what(rec);
  auto canonical = node_path(target, "target", what);
  if (!canonical) {
    return canonical.error();
  }
  auto opts = parse_block_mount_flags(how.flags, what);
  if (!opts) {
    return opts.error();
  }
  if (!opts->data.empty()) {
    spdlog::debug("{}: filesystem options \"{}\" apply at stage only, not on the bind of {}",
                  what, opts->data, target);
  }
  unsigned long flags = opts->flags | (how.readonly ? MS_RDONLY : 0);
  auto device = find_loop_device(*image);
  if (!device) {
    return device.error();
  }
  if (device->empty()) {
    return make_error(ec::failed_precondition, what + ": not staged (no loop device backs "
                                                 + *image + ")");
  }
  auto mounts = read_mountinfo();
  if (!mounts) {
    return mounts.error();
  }
  auto mine = block_origins(*mounts, *device, "");
  std::string source = *device;
  if (!how.block) {
    // The bind source must be this volume's filesystem, not whatever is mounted
    // at the staging path now.
    auto staging = rec.staging_path.empty()
                     ? caf::expected<std::string>{std::string{}}
                     : node_path(rec.staging_path, "staging path", what);
    if (!staging) {
      return staging.error();
    }
    auto here = mounts_at(*mounts, *staging);
    if (staging->empty() || here.empty() || !mine.owns(*here.back())) {
      return make_error(ec::failed_precondition, what + ": not staged (its filesystem is not "
                                                   "mounted at \"" + rec.staging_path + "\")");
    }
    source = *staging;
  }
  auto created = bind_publish(source, *canonical, how.block, flags, mine, what, *mounts);
  if (!created) {
    return created.error();
  }
  spdlog::info("{}: published {} at {}{}{}", what, source, *canonical,
               how.readonly ? " (ro)" : "", *created ? "" : " (target existed)");
  return created;
}

caf::error block_backend::unpublish(const volume_record& rec, const std::string& target) {
  auto view = view_at(rec, target, "target");
  if (!view) {
    return view.error();
  }
  auto it = rec.published.find(target);
  bool created = it != rec.published.end() && it->second.created;
  if (auto err = bind_unpublish(view->path, block_origins(view->mounts, view->device, rec.device),
                                created, view->what, view->mounts)) {
    return err;
  }
  spdlog::debug("{}: unpublished {}", view->what, view->path);
  return {};
}

} // namespace berth
