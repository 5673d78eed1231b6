#include "persistence/ecs_import.hpp"

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

#include <rapidjson/document.h>
#include <rapidjson/error/en.h>

#include "core/errors.hpp"
#include "core/names.hpp"

namespace berth {

namespace {

caf::error bad(const std::string& path, const std::string& what) {
  return make_error(ec::invalid_argument, "ECS state " + path + ": " + what);
}

std::string string_member(const rapidjson::Value& v, const char* key) {
  auto it = v.FindMember(key);
  if (it == v.MemberEnd() || !it->value.IsString()) {
    return {};
  }
  return it->value.GetString();
}

} // namespace

caf::expected<state_snapshot> import_ecs_state(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    return bad(path, std::string{"cannot be read: "} + std::strerror(errno));
  }
  std::ostringstream ss;
  ss << in.rdbuf();
  auto text = ss.str();
  rapidjson::Document doc;
  doc.Parse(text.c_str(), text.size());
  if (doc.HasParseError()) {
    return bad(path, std::string{"malformed JSON at byte "}
                       + std::to_string(doc.GetErrorOffset()) + ": "
                       + rapidjson::GetParseError_En(doc.GetParseError()));
  }
  if (!doc.IsObject()) {
    return bad(path, "is not a JSON object");
  }
  auto vols = doc.FindMember("volumes");
  if (vols == doc.MemberEnd() || !(vols->value.IsObject() || vols->value.IsNull())) {
    return bad(path, "lacks a \"volumes\" object");
  }
  state_snapshot state;
  state.imported = true;
  if (vols->value.IsNull()) {
    return state;
  }
  for (const auto& m : vols->value.GetObject()) {
    std::string name = m.name.GetString();
    if (!is_valid_volume_name(name)) {
      return bad(path, "volume name \"" + name + "\" is not valid for berth");
    }
    if (!m.value.IsObject()) {
      return bad(path, "volume " + name + " is not an object");
    }
    volume_record rec;
    rec.name = name;
    rec.owner = record_owner::docker; // ECS speaks the Docker plugin protocol
    rec.created_at = string_member(m.value, "createdAt");
    rec.mountpoint = string_member(m.value, "path");
    if (auto opts = m.value.FindMember("options");
        opts != m.value.MemberEnd() && opts->value.IsObject()) {
      for (const auto& o : opts->value.GetObject()) {
        if (!o.value.IsString()) {
          return bad(path, "volume " + name + ": option \"" + o.name.GetString()
                             + "\" is not a string");
        }
        rec.options[o.name.GetString()] = o.value.GetString();
      }
    }
    auto type = string_member(m.value, "type");
    if (!type.empty() && rec.options.count("type") == 0) {
      rec.options["type"] = type;
    }
    if (auto mounts = m.value.FindMember("mounts");
        mounts != m.value.MemberEnd() && mounts->value.IsObject()) {
      for (const auto& id : mounts->value.GetObject()) {
        std::string mount_id = id.name.GetString();
        if (!is_valid_mount_id(mount_id)) {
          return bad(path, "volume " + name + " has an invalid mount ID \"" + mount_id + "\"");
        }
        if (!id.value.IsNull() && !id.value.IsNumber()) {
          return bad(path, "volume " + name + ": the count of mount ID " + mount_id
                             + " is neither null nor a number");
        }
        // The ECS plugin writes null per ID: it still counts once (old state files load).
        uint32_t n = 1;
        if (id.value.IsUint() && id.value.GetUint() > 0) {
          n = id.value.GetUint();
        }
        rec.mounts[mount_id] = n;
      }
    } else if (mounts != m.value.MemberEnd() && !mounts->value.IsNull()) {
      return bad(path, "volume " + name + ": \"mounts\" is not an object");
    }
    rec.mounted = !rec.mounts.empty();
    // The host mount lives at ECS's path; it is kept even while unmounted, and
    // reconciliation clears it for a volume that no mount ID holds.
    state.volumes.emplace(name, std::move(rec));
  }
  return state;
}

} // namespace berth
