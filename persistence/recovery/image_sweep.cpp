#include "persistence/recovery/image_sweep.hpp"

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <set>

#include <unistd.h>

#include <spdlog/spdlog.h>

#include "backends/block_backend.hpp"
#include "backends/detail/block_image.hpp"
#include "backends/loop_device.hpp"
#include "core/errors.hpp"

namespace fs = std::filesystem;

namespace berth {

std::vector<std::string> images_to_sweep(
  const state_snapshot& state, const std::function<std::string(const volume_record&)>& image_of,
  const std::vector<std::string>& files) {
  std::set<std::string> held;
  for (const auto& [name, rec] : state.volumes) {
    if (auto image = image_of(rec); !image.empty()) {
      held.insert(image);
    }
  }
  std::vector<std::string> out;
  for (const auto& file : files) {
    const auto base = fs::path(file).filename().string();
    const bool temp = is_block_image_temp_name(base);
    const bool image = fs::path(base).extension() == ".img" && base[0] != '.';
    if (temp || (image && held.count(file) == 0)) {
      out.push_back(file);
    }
  }
  return out;
}

std::string state_instance(const std::string& state_dir) {
  const auto path = state_dir + "/state/instance-id";
  std::string id;
  if (std::ifstream in{path}; in) {
    std::getline(in, id);
  }
  if (id.size() == 32) {
    return id;
  }
  std::ifstream random{"/dev/urandom", std::ios::binary};
  unsigned char bytes[16] = {};
  random.read(reinterpret_cast<char*>(bytes), sizeof(bytes));
  static constexpr char hex[] = "0123456789abcdef";
  id.clear();
  for (unsigned char c : bytes) {
    id += hex[c >> 4];
    id += hex[c & 15];
  }
  std::error_code err;
  fs::create_directories(fs::path(path).parent_path(), err);
  std::ofstream out{path};
  out << id << "\n";
  if (!random || !out.flush()) {
    spdlog::warn("cannot make {}: images and copies without a record are kept", path);
    return {};
  }
  return id;
}

namespace {

/// True when BLOCK/owner names this state (state_instance); writes it, and answers false,
/// when there is none yet.
bool owned_by(const std::string& block_root, const std::string& state_dir) {
  const auto id = state_instance(state_dir);
  if (id.empty()) {
    return false;
  }
  const auto marker = block_root + "/owner";
  std::ifstream in(marker);
  if (in) {
    std::string named;
    std::getline(in, named);
    if (named == id) {
      return true;
    }
    spdlog::warn("image sweep: {} names another state than {} ({}, not {}): images without a "
                 "record here may be that state's, so none is deleted (delete {} once they "
                 "are not)", marker, state_dir, named, id, marker);
    return false;
  }
  std::error_code err;
  fs::create_directories(block_root, err);
  std::ofstream out(marker);
  out << id << "\n";
  if (!out.flush()) {
    spdlog::warn("image sweep: cannot write {}: images without a record are kept", marker);
  }
  return false;
}

} // namespace

image_sweep_report sweep_block_images(
  const state_snapshot& state, const std::map<std::string, std::shared_ptr<backend>>& backends,
  const std::string& state_dir) {
  image_sweep_report report;
  const auto* block = block_backend_of(backends);
  if (block == nullptr) {
    return report;
  }
  std::vector<std::string> files;
  for (const auto& dir : block->image_dirs()) {
    std::error_code err;
    for (const auto& entry : fs::directory_iterator(dir, err)) {
      std::error_code type_err;
      if (entry.is_regular_file(type_err) && !entry.is_symlink(type_err)) {
        files.push_back(entry.path().string());
      }
    }
  }
  auto image_of = [block](const volume_record& rec) { return block->image_path(rec); };
  const auto dirs = block->image_dirs();
  const bool owned = !dirs.empty() && owned_by(fs::path(dirs.front()).parent_path().string(),
                                               state_dir);
  for (const auto& file : images_to_sweep(state, image_of, files)) {
    if (!owned && !is_block_image_temp_name(fs::path(file).filename().string())) {
      continue;
    }
    auto device = find_loop_device(file);
    if (!device || !device->empty()) {
      spdlog::error("image sweep: {} has no volume but {}; it is left alone", file,
                    device ? "loop device " + *device + " still backs it"
                           : "its loop devices cannot be read: " + describe(device.error()));
      ++report.failed;
      continue;
    }
    if (::unlink(file.c_str()) != 0 && errno != ENOENT) {
      spdlog::error("image sweep: cannot delete {}, which no volume holds: {}", file,
                    std::strerror(errno));
      ++report.failed;
      continue;
    }
    spdlog::warn("image sweep: deleted {}: no volume holds it (left by a create or a copy "
                 "killed before its record was saved, which no client was told of)", file);
    ++report.removed;
  }
  return report;
}

} // namespace berth
