#include "backends/detail/block_helpers.hpp"

#include <sys/stat.h>

#include <cerrno>
#include <cstring>

#include "backends/detail/block_image.hpp"
#include "backends/local_options.hpp"
#include "backends/loop_device.hpp"
#include "core/errors.hpp"

namespace berth {

const char* const block_k8s_prefix = "csi.storage.k8s.io/";

bool is_block_creation_key(const std::string& key) {
  return key == "fsType" || key == "backend" || key.rfind(block_k8s_prefix, 0) == 0;
}

std::string block_what(const volume_record& rec) {
  return to_string(rec.kind) + " " + rec.name;
}

std::string block_fs_type(const option_map& options) {
  auto it = options.find("fsType");
  return it == options.end() || it->second.empty() ? "xfs" : it->second;
}

std::string docker_block_fs_type(const option_map& options) {
  auto it = options.find("fstype");
  return it == options.end() ? "ext4" : it->second;
}

caf::expected<std::string> attach_block_image(const std::string& image, const loop_setup& setup,
                                              bool& attached, const std::string& what) {
  attached = false;
  if (auto size = block_image_size(image); !size) {
    return make_error(ec::not_found, what + ": " + describe(size.error()));
  }
  return find_or_attach_loop_device(image, attached, setup);
}

std::vector<std::string> block_mounts_of(const std::string& device) {
  std::vector<std::string> out;
  auto entries = read_mountinfo();
  if (entries) {
    for (const auto& e : *entries) {
      if (e.source == device) {
        out.push_back(e.mount_point);
      }
    }
  }
  return out;
}

caf::error check_block_fs_type(const std::string& fs_type, const std::string& what) {
  if (fs_type != "xfs" && fs_type != "ext4") {
    return make_error(ec::invalid_argument,
                      what + ": fsType \"" + fs_type + "\" is not supported (xfs or ext4)");
  }
  return {};
}

caf::error check_block_path(const std::string& path, const std::string& role,
                            const std::string& what) {
  if (!is_clean_absolute_path(path) || path == "/") {
    return make_error(ec::invalid_argument,
                      what + ": " + role + " \"" + path + "\" is not a clean absolute path");
  }
  // A mount through a symlink lands at its target, where unstage would never look.
  struct stat st {};
  if (::lstat(path.c_str(), &st) == 0 && S_ISLNK(st.st_mode)) {
    return make_error(ec::invalid_argument,
                      what + ": " + role + " \"" + path + "\" is a symbolic link");
  }
  return {};
}

std::optional<mount_entry> block_mount_at(const std::string& path) {
  auto entries = read_mountinfo();
  std::optional<mount_entry> found;
  if (entries) {
    for (auto& e : *entries) {
      if (e.mount_point == path) {
        found = std::move(e);
      }
    }
  }
  return found;
}

caf::expected<struct statvfs> block_statvfs(const std::string& path, const std::string& what) {
  struct statvfs vfs {};
  if (::statvfs(path.c_str(), &vfs) != 0) {
    int e = errno;
    return make_error(ec::backend_failure, what + ": statvfs of " + path + " failed: "
                                             + std::strerror(e));
  }
  return vfs;
}

volume_origins block_origins(const std::vector<mount_entry>& mounts, const std::string& device,
                             const std::string& node) {
  volume_origins out;
  struct stat st {};
  if (!device.empty() && ::stat(device.c_str(), &st) == 0 && S_ISBLK(st.st_mode)) {
    out.fs = mount_origin{dev_string(st.st_rdev), "/"};
  }
  auto bound = device.empty() ? node : device;
  if (!bound.empty()) {
    out.node = origin_of(mounts, bound);
  }
  return out;
}

} // namespace berth
