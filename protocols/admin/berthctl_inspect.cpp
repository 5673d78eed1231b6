#include "protocols/admin/berthctl_inspect.hpp"

#include <chrono>

#include <rapidjson/document.h>

#include "core/errors.hpp"
#include "protocols/admin/admin_telemetry.hpp"

namespace berth::cli {

namespace {

caf::error bad(const std::string& what) {
  return make_error(ec::invalid_argument, "invalid volume record: " + what);
}

} // namespace

caf::error read_mount_origins(const std::string& body, volume_record& rec) {
  rapidjson::Document doc;
  doc.Parse(body.c_str(), body.size());
  if (doc.HasParseError() || !doc.IsObject()) {
    return bad("malformed JSON");
  }
  auto it = doc.FindMember("mount_origins");
  if (it == doc.MemberEnd() || it->value.IsNull()) {
    return {};
  }
  if (!it->value.IsObject()) {
    return bad("\"mount_origins\" is not an object");
  }
  for (const auto& m : it->value.GetObject()) {
    std::string id{m.name.GetString(), m.name.GetStringLength()};
    if (!m.value.IsObject()) {
      return bad("\"mount_origins\" of \"" + id + "\" is not an object");
    }
    mount_id_origin origin;
    if (auto d = m.value.FindMember("dockerd"); d != m.value.MemberEnd() && !d->value.IsNull()) {
      if (!d->value.IsString()) {
        return bad("\"mount_origins\" \"" + id + "\" \"dockerd\" is not a string");
      }
      origin.dockerd.assign(d->value.GetString(), d->value.GetStringLength());
    }
    if (auto t = m.value.FindMember("last_mounted_ms");
        t != m.value.MemberEnd() && !t->value.IsNull()) {
      if (!t->value.IsInt64()) {
        return bad("\"mount_origins\" \"" + id + "\" \"last_mounted_ms\" is not an integer");
      }
      origin.last_mounted_ms = t->value.GetInt64();
    }
    if (rec.mounts.count(id) != 0) {
      rec.origins[id] = std::move(origin);
    }
  }
  return {};
}

std::string format_mounted_at(int64_t ms) {
  if (ms <= 0) {
    return "unknown";
  }
  return admin::rfc3339(std::chrono::system_clock::time_point{std::chrono::milliseconds{ms}});
}

std::string format_mount_ids(const volume_record& rec) {
  std::string out;
  for (const auto& [id, count] : rec.mounts) {
    mount_id_origin origin;
    if (auto it = rec.origins.find(id); it != rec.origins.end()) {
      origin = it->second;
    }
    out += "  " + id + ": count " + std::to_string(count) + ", dockerd "
           + (origin.dockerd.empty() ? std::string{"unknown"} : origin.dockerd)
           + ", last mounted " + format_mounted_at(origin.last_mounted_ms) + "\n";
  }
  return out;
}

} // namespace berth::cli
