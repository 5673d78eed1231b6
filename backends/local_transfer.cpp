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

caf::expected<export_view> local_backend::open_export(const volume_record& rec,
                                                      const std::string& id) {
  if (auto err = check_name(rec.name)) {
    return err;
  }
  if (auto err = check_export_id("volume " + rec.name + ": export", id)) {
    return err;
  }
  if (auto err = check_copy_source(rec)) {
    return err;
  }
  const auto what = "volume " + rec.name + ": export";
  if (auto err = make_root(exports_dir_, fs::perms(0700), what)) {
    return err;
  }
  const auto source_data = volume_dir(rec.name) + "/data";
  if (!fs::is_directory(source_data)) {
    return make_error(ec::not_found, what + ": no data at " + source_data);
  }
  const auto dir = exports_dir_ + "/" + id;
  auto consistency = copy_data(rec.name, source_data, dir, "volume:" + rec.name, false, what);
  if (!consistency) {
    return consistency.error();
  }
  return export_view{dir + "/data", *consistency};
}

caf::error local_backend::close_export(const volume_record& rec, const std::string& id) {
  const auto what = "volume " + rec.name + ": export";
  if (auto err = check_export_id(what, id)) {
    return err;
  }
  return delete_unmounted(exports_dir_ + "/" + id, what);
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
