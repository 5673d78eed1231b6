// local_backend, copies: a snapshot of a plain directory volume, and a volume made from
// such a snapshot or volume. A directory cannot be frozen apart from the filesystem it
// lies on (which holds berth's journal too), so a copy of one that is in use is made
// file by file under its writers and says so (docs/running.md, "What consistent means").

#include <filesystem>

#include <spdlog/spdlog.h>

#include "backends/detail/tree_copy.hpp"
#include "backends/local_backend.hpp"
#include "backends/mountinfo.hpp"
#include "core/names.hpp"

namespace fs = std::filesystem;

namespace berth {

namespace {

std::string copy_what(const volume_record& rec) {
  return to_string(rec.kind) + " " + rec.name;
}

} // namespace

bool local_backend::copies_content() const {
  return true;
}

std::string local_backend::snapshot_dir(const std::string& snapshot) const {
  if (!is_valid_volume_name(snapshot)) {
    return {};
  }
  return snapshots_dir_ + "/" + snapshot;
}

std::string local_backend::storage_dir(const volume_record& rec) const {
  return rec.kind == record_kind::snapshot ? snapshot_dir(rec.name) : volume_dir(rec.name);
}

caf::error local_backend::check_copy_source(const volume_record& source) const {
  if (source.kind == record_kind::snapshot) {
    return {}; // made by a copy: always a directory
  }
  auto plan = plan_local_mount(source.name, source.options, efs_environment{});
  const bool directory = plan && plan->kind == local_kind::directory;
  // An imported (ECS) volume keeps a path of its own, outside STATE/volumes.
  const bool imported = !source.mountpoint.empty()
                        && source.mountpoint != volume_dir(source.name) + "/mnt";
  if (!directory || imported) {
    return make_error(ec::unsupported,
                      "volume " + source.name + " is not a plain directory volume (it mounts "
                        + (imported ? "an imported path" : "its type= or device= option")
                        + "), so berth cannot copy it: snapshots, clones and exports need a plain "
                          "directory volume or one made with -o backend=block");
  }
  return {};
}

caf::expected<std::string> local_backend::create_copy(const volume_record& rec) {
  if (auto err = check_name(rec.name)) {
    return err;
  }
  const auto what = copy_what(rec);
  if (rec.source.empty() || !is_valid_volume_name(rec.source.name)
      || (rec.kind == record_kind::snapshot && rec.source.kind != record_kind::volume)) {
    return make_error(ec::invalid_argument, what + ": source \"" + rec.source.describe()
                                              + "\" must be volume:NAME"
                                              + (rec.kind == record_kind::snapshot
                                                   ? std::string{}
                                                   : " or snapshot:NAME"));
  }
  const auto target = storage_dir(rec);
  if (auto made = detail::read_copy_marker(target).source; !made.empty()) {
    if (made == rec.source.describe()) {
      // Made before by a copy whose caller gave up on it, of this source: a copy never
      // changes. How its source was in use then is not known now, so it is not vouched for.
      spdlog::info("{}: {} was copied from {} before; kept", what, target, made);
      return rec.source.kind == record_kind::volume ? std::string{copy_crash_consistent}
                                                    : std::string{};
    }
    if (auto err = drop_orphan_copy(target, what)) {
      return err;
    }
  }
  const bool from_volume = rec.source.kind == record_kind::volume;
  const auto source_data = (from_volume ? volume_dir(rec.source.name)
                                        : snapshot_dir(rec.source.name))
                           + "/data";
  if (!fs::is_directory(source_data)) {
    return make_error(ec::not_found, what + ": " + rec.source.describe() + " has no data at "
                                       + source_data);
  }
  if (auto err = make_storage_root(rec)) {
    return err;
  }
  // A snapshot's copy is all it holds; a volume's is what its containers see (mnt/ too).
  return copy_data(from_volume ? rec.source.name : std::string{}, source_data, target,
                   rec.source.describe(), rec.kind == record_kind::volume, what);
}

detail::copy_mark local_backend::mark_of(const std::string& source) const {
  return {source, detail::read_state_identity(state_dir_)};
}

caf::error local_backend::delete_unmounted(const std::string& dir, const std::string& what) const {
  auto points = read_mount_points();
  if (!points) {
    return points.error();
  }
  if (auto p = mount_at_or_under(*points, dir); !p.empty()) {
    return make_error(ec::in_use, what + ": " + dir + ", which no record holds, has a mount "
                                    "at " + p + "; berth leaves it alone: unmount it, then retry");
  }
  return detail::delete_copy(dir, what);
}

caf::error local_backend::drop_orphan_copy(const std::string& dir, const std::string& what) const {
  spdlog::warn("{}: deleting {}, a copy of {} that no record holds", what, dir,
               detail::read_copy_marker(dir).source);
  return delete_unmounted(dir, what);
}

caf::expected<std::string> local_backend::copy_data(const std::string& volume,
                                                    const std::string& source_data,
                                                    const std::string& target,
                                                    const std::string& source,
                                                    bool with_mountpoint,
                                                    const std::string& what) {
  // Read before the copy, in this order: a mount that lands meanwhile either shows in
  // mountinfo or counts after it.
  const bool from_volume = !volume.empty();
  const auto mounts_before = from_volume ? mounts_.of(volume) : 0;
  const auto mnt = volume_dir(volume) + "/mnt";
  const bool mounted_before = from_volume && is_mount_point(mnt);
  if (auto err = detail::copy_directory_volume(source_data, target, mark_of(source),
                                               with_mountpoint, helper_timeout_, what)) {
    return err;
  }
  // A snapshot never changes. Of a volume: mountinfo before the count, so that a mount
  // that ends after this read has counted.
  const bool idle = !from_volume
                    || (!mounted_before && !is_mount_point(mnt)
                        && mounts_.of(volume) == mounts_before);
  auto consistency = idle ? std::string{} : std::string{copy_crash_consistent};
  spdlog::info("{}: copied from {} to {}{}", what, source, target,
               idle ? "" : " while it was in use (" + consistency + ")");
  return consistency;
}

} // namespace berth
