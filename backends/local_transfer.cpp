// local_backend, export and import of a plain directory volume: an export reads a copy of
// the volume's data/ made for it (consistent as a snapshot's, local_copy.cpp); an import's
// staging tree, extracted under STATE, is moved to be the new volume's data/.

#include <filesystem>

#include <spdlog/spdlog.h>
#include <sys/stat.h>

#include "backends/detail/root_ownership.hpp"
#include "backends/detail/tree_copy.hpp"
#include "backends/local_backend.hpp"
#include "backends/mountinfo.hpp"
#include "core/names.hpp"

namespace fs = std::filesystem;

namespace berth {

namespace {

caf::error check_export_id(const std::string& volume, const std::string& id) {
  if (!is_valid_volume_name(id)) {
    return make_error(ec::invalid_argument, "volume " + volume + ": invalid export id \""
                                              + id + "\"");
  }
  return {};
}

} // namespace

caf::expected<export_view> local_backend::open_export(const volume_record& rec,
                                                      const std::string& id) {
  if (auto err = check_name(rec.name)) {
    return err;
  }
  if (auto err = check_export_id(rec.name, id)) {
    return err;
  }
  if (auto err = check_copy_source(rec)) {
    return err;
  }
  const auto what = "volume " + rec.name + ": export";
  std::error_code err;
  fs::create_directories(exports_dir_, err);
  fs::permissions(exports_dir_, fs::perms(0700), fs::perm_options::replace, err);
  if (err) {
    return make_error(ec::backend_failure, what + ": cannot make " + exports_dir_ + " (0700): "
                                             + err.message());
  }
  const auto source_data = volume_dir(rec.name) + "/data";
  if (!fs::is_directory(source_data)) {
    return make_error(ec::not_found, what + ": no data at " + source_data);
  }
  const auto mounts_before = mounts_.of(rec.name);
  const bool mounted_before = is_mount_point(volume_dir(rec.name) + "/mnt");
  const auto dir = exports_dir_ + "/" + id;
  if (auto failed = detail::copy_directory_volume(source_data, dir, mark_of("volume:" + rec.name), false,
                                                  helper_timeout_, what)) {
    return failed;
  }
  export_view view{dir + "/data", consistency_after(rec.name, mounts_before, mounted_before)};
  spdlog::info("{}: copied to {}{}", what, dir,
               view.consistency.empty() ? "" : " while it was in use (" + view.consistency + ")");
  return view;
}

caf::error local_backend::close_export(const volume_record& rec, const std::string& id) {
  if (auto err = check_export_id(rec.name, id)) {
    return err;
  }
  const auto dir = exports_dir_ + "/" + id;
  auto points = read_mount_points();
  if (!points) {
    return points.error();
  }
  for (const auto& p : *points) {
    if (p == dir || p.compare(0, dir.size() + 1, dir + "/") == 0) {
      return make_error(ec::in_use, "volume " + rec.name + ": export copy " + dir
                                      + " has a mount at " + p + "; it is left alone");
    }
  }
  std::error_code err;
  fs::remove_all(dir, err); // does not follow symlinks
  if (err) {
    return make_error(ec::backend_failure, "volume " + rec.name + ": cannot delete " + dir
                                             + ": " + err.message());
  }
  return {};
}

caf::error local_backend::create_from_tree(const volume_record& rec, const std::string& tree) {
  if (auto err = check_name(rec.name)) {
    return err;
  }
  auto plan = plan_local_mount(rec.name, rec.options, efs_environment{});
  if (!plan) {
    return plan.error();
  }
  if (plan->kind != local_kind::directory) {
    return make_error(ec::invalid_argument, "volume " + rec.name + ": an import makes a plain "
                                              "directory volume or a block one; leave type, "
                                              "device and o out");
  }
  if (auto err = make_storage_root(rec)) {
    return err;
  }
  const auto what = "volume " + rec.name + ": import";
  const auto dir = volume_dir(rec.name);
  if (!detail::read_copy_marker(dir).source.empty()) {
    // Left by a copy or import whose caller was told it failed: this import starts afresh.
    if (auto err = drop_orphan_copy(dir, what)) {
      return err;
    }
  }
  if (auto err = detail::adopt_directory_volume(tree, dir, mark_of("import"), what)) {
    return err;
  }
  if (detail::names_root_ownership(rec.options)) {
    if (auto err = detail::apply_root_ownership(rec.name, dir + "/data", plan->root)) {
      return err;
    }
  }
  spdlog::info("{}: {} moved to {}/data", what, tree, dir);
  return {};
}

} // namespace berth
