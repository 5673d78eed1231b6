#include "protocols/docker/sync/mount_map.hpp"

#include <filesystem>
#include <fstream>
#include <sstream>

#include <rapidjson/document.h>
#include <spdlog/spdlog.h>

#include "core/errors.hpp"
#include "core/json_text.hpp"
#include "core/limits.hpp"

namespace berth::docker_sync {

namespace fs = std::filesystem;

caf::error add_config_mount_ids(const std::string& json, const std::string& container_id,
                                mount_map& out) {
  rapidjson::Document doc;
  doc.Parse(json.c_str(), json.size());
  if (doc.HasParseError() || !doc.IsObject()) {
    return make_error(ec::invalid_argument, "config.v2.json of container " + container_id
                                              + " is not a JSON object");
  }
  auto cid = json_text(doc, "ID");
  if (cid.empty()) {
    cid = container_id;
  }
  const auto& points = json_object(doc, "MountPoints");
  for (auto it = points.MemberBegin(); it != points.MemberEnd(); ++it) {
    auto id = json_text(it->value, "ID");
    if (!id.empty()) {
      out[id] = cid;
    }
  }
  return {};
}

caf::expected<mount_map> read_mount_map(const std::string& root_dir) {
  auto dir = fs::path{root_dir} / "containers";
  std::error_code err;
  fs::directory_iterator it{dir, err};
  if (err) {
    return make_error(ec::unavailable, "cannot list " + dir.string() + ": " + err.message());
  }
  mount_map out;
  for (; it != fs::directory_iterator{}; it.increment(err)) {
    if (err) {
      return make_error(ec::unavailable, "cannot list " + dir.string() + ": " + err.message());
    }
    auto file = it->path() / "config.v2.json";
    std::error_code size_err;
    auto size = fs::file_size(file, size_err);
    if (size_err || size > limits::max_docker_config_bytes) {
      spdlog::debug("{} skipped: {}", file.string(),
                    size_err ? size_err.message() : "larger than "
                                 + std::to_string(limits::max_docker_config_bytes) + " bytes");
      continue;
    }
    std::ifstream in{file};
    if (!in) {
      continue; // removed meanwhile
    }
    std::ostringstream text;
    text << in.rdbuf();
    if (auto bad = add_config_mount_ids(text.str(), it->path().filename().string(), out)) {
      spdlog::debug("{} skipped: {}", file.string(), describe(bad));
    }
  }
  return out;
}

} // namespace berth::docker_sync
