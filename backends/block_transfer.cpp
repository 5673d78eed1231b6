// block_backend, export and import of a Docker block volume. An export reads a copy of the
// image made as a snapshot's is (its filesystem frozen while mounted), attached and mounted
// under BLOCK/exports, or the copy's image itself for a delta; an import makes the new
// volume's image as a create does and copies the staging tree into it. Neither leaves
// anything mounted or attached that no record holds but for a crash, which the start-up
// sweeps clean.

#include <filesystem>

#include <spdlog/spdlog.h>

#include "backends/block_backend.hpp"
#include "backends/detail/block_helpers.hpp"
#include "backends/detail/block_image.hpp"
#include "backends/detail/block_mounts.hpp"
#include "backends/detail/root_ownership.hpp"
#include "backends/detail/tree_copy.hpp"
#include "backends/helper_process.hpp"
#include "backends/loop_device.hpp"

namespace fs = std::filesystem;

namespace berth {

std::string block_backend::exports_dir() const {
  return root_ + "/exports";
}

caf::expected<export_view> block_backend::copy_for_export(const volume_record& rec,
                                                          const std::string& id,
                                                          const std::string& what) {
  auto image = checked_image(rec);
  if (!image) {
    return image.error();
  }
  if (auto err = check_export_id(what, id)) {
    return err;
  }
  const auto copy = exports_dir() + "/" + id + ".img";
  auto consistency = copy_of(volume_source(rec.name), *image, copy, 0, what);
  if (!consistency) {
    return consistency.error();
  }
  return export_view{copy, *consistency};
}

caf::expected<export_view> block_backend::open_export(const volume_record& rec,
                                                      const std::string& id) {
  const auto what = block_what(rec) + ": export";
  auto copied = copy_for_export(rec, id, what);
  if (!copied) {
    return copied.error();
  }
  const auto& copy = copied->path;
  const auto mnt = exports_dir() + "/" + id;
  auto opened = [&]() -> caf::error {
    auto device = attach_loop_device(copy, attach_setup());
    if (!device) {
      return device.error();
    }
    auto fs_type = probe_filesystem(what, *device);
    if (!fs_type) {
      return fs_type.error();
    }
    if (*fs_type != "ext4" && *fs_type != "xfs") {
      return make_error(ec::failed_precondition, what + ": the copy holds "
                                                   + (fs_type->empty() ? "nothing" : *fs_type)
                                                   + ", not ext4 or xfs");
    }
    return mount_to_prepare(*device, mnt, *fs_type, what);
  }();
  if (opened) {
    if (auto left = close_export(rec, id)) {
      spdlog::warn("{}: {}", what, describe(left));
    }
    return opened;
  }
  spdlog::info("{}: copied to {} and mounted at {}{}", what, copy, mnt,
               copied->consistency.empty() ? "" : " (" + copied->consistency + ")");
  return export_view{mnt, copied->consistency};
}

caf::expected<export_view> block_backend::open_export_image(const volume_record& rec,
                                                            const std::string& id) {
  const auto what = block_what(rec) + ": export of changed blocks";
  auto copied = copy_for_export(rec, id, what);
  if (copied) {
    spdlog::info("{}: copied to {}{}", what, copied->path,
                 copied->consistency.empty() ? "" : " (" + copied->consistency + ")");
  }
  return copied;
}

caf::error block_backend::close_export(const volume_record& rec, const std::string& id) {
  const auto what = block_what(rec) + ": export";
  if (auto err = check_export_id(what, id)) {
    return err;
  }
  const auto copy = exports_dir() + "/" + id + ".img";
  const auto mnt = exports_dir() + "/" + id;
  auto device = find_loop_device(copy);
  if (!device) {
    return device.error();
  }
  if (!device->empty()) {
    if (auto err = unmount_and_detach(*device, mnt, false, what)) {
      return err;
    }
  }
  std::error_code ignored;
  fs::remove(mnt, ignored); // an empty directory only: a mount on it makes this fail
  return remove_block_image(copy, what);
}

caf::error block_backend::create_from_tree(const volume_record& rec, const std::string& tree) {
  auto image = checked_image(rec);
  if (!image) {
    return image.error();
  }
  const auto what = block_what(rec) + ": import";
  if (rec.capacity_bytes == 0) {
    return make_error(ec::invalid_argument, what + ": a block volume needs a capacity");
  }
  if (block_image_size(*image)) {
    return make_error(ec::already_exists, what + ": image " + *image + " exists already");
  }
  auto root = detail::parse_root_ownership(rec.name, rec.options);
  if (!root) {
    return root.error();
  }
  if (auto err = create_sparse_block_image(*image, rec.capacity_bytes, what)) {
    return err;
  }
  auto filled = [&]() -> caf::error {
    if (auto err = prepare_docker_volume(rec, *image)) {
      return err;
    }
    bool attached = false;
    auto device = find_or_attach_loop_device(*image, attached, attach_setup());
    if (!device) {
      return device.error();
    }
    const auto mnt = (fs::path(tree).parent_path() / "mnt").string();
    auto copied = [&]() -> caf::error {
      if (auto err = mount_to_prepare(*device, mnt, docker_block_fs_type(rec.options), what)) {
        return err;
      }
      auto out = run_helper_checked({"cp", "-a", "--sparse=always", "--", tree + "/.", mnt},
                                    helper_timeout_, what + ": copy into the new filesystem failed");
      if (!out) {
        if (describe(out.error()).find("No space left on device") != std::string::npos) {
          return make_error(ec::out_of_range,
                            what + ": the import does not fit in " + std::to_string(rec.capacity_bytes)
                              + " bytes; give a larger -o size");
        }
        return out.error();
      }
      if (detail::names_root_ownership(rec.options)) {
        if (auto err = detail::apply_root_ownership(rec.name, mnt, *root)) {
          return err;
        }
      }
      return detail::flush_directory(mnt, true, what);
    }();
    auto settled = unmount_and_detach(*device, mnt, false, what);
    return copied ? copied : settled;
  }();
  if (filled) {
    remove_block_image(*image, what); // nothing of a failed import stays
    return filled;
  }
  spdlog::info("{}: {} copied into a new {}-byte image", what, tree, rec.capacity_bytes);
  return {};
}

} // namespace berth
