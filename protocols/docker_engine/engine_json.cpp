#include "protocols/docker_engine/engine_json.hpp"

#include <cerrno>
#include <cstdlib>

#include <rapidjson/document.h>
#include <rapidjson/error/en.h>

#include "core/errors.hpp"

namespace berth::docker_engine {

namespace {

using value = rapidjson::Value;

const value* member(const value& obj, const char* key) {
  if (!obj.IsObject()) {
    return nullptr;
  }
  auto it = obj.FindMember(key);
  return it == obj.MemberEnd() ? nullptr : &it->value;
}

std::string text(const value& obj, const char* key) {
  auto v = member(obj, key);
  return v && v->IsString() ? std::string{v->GetString(), v->GetStringLength()} : std::string{};
}

const value& object(const value& obj, const char* key) {
  static const value empty{rapidjson::kObjectType};
  auto v = member(obj, key);
  return v && v->IsObject() ? *v : empty;
}

caf::error malformed(const char* what, const std::string& why) {
  return make_error(ec::unavailable, std::string{"Docker API sent a malformed "} + what + ": " + why);
}

caf::expected<rapidjson::Document> parse(const std::string& json, const char* what,
                                         rapidjson::Type want) {
  rapidjson::Document doc;
  doc.Parse(json.data(), json.size());
  if (doc.HasParseError()) {
    return malformed(what, std::string{rapidjson::GetParseError_En(doc.GetParseError())} +
                             " at offset " + std::to_string(doc.GetErrorOffset()));
  }
  if (doc.GetType() != want) {
    return malformed(what, want == rapidjson::kArrayType ? "not a JSON array" : "not a JSON object");
  }
  return doc;
}

} // namespace

bool container::holds_mounts() const {
  return state == "running" || state == "paused" || state == "restarting";
}

caf::expected<engine_info> parse_info(const std::string& json) {
  auto doc = parse(json, "/info", rapidjson::kObjectType);
  if (!doc) {
    return doc.error();
  }
  engine_info info;
  info.id = text(*doc, "ID");
  info.root_dir = text(*doc, "DockerRootDir");
  info.server_version = text(*doc, "ServerVersion");
  info.system_time = text(*doc, "SystemTime");
  if (info.id.empty()) {
    return malformed("/info", "no ID");
  }
  return info;
}

caf::expected<container_list> parse_containers(const std::string& json) {
  auto doc = parse(json, "container list", rapidjson::kArrayType);
  if (!doc) {
    return doc.error();
  }
  container_list out;
  for (const auto& item : doc->GetArray()) {
    container c;
    c.id = text(item, "Id");
    if (c.id.empty()) {
      return malformed("container list", "an entry without Id");
    }
    c.state = text(item, "State");
    if (auto names = member(item, "Names"); names && names->IsArray()) {
      for (const auto& n : names->GetArray()) {
        if (n.IsString()) {
          c.names.emplace_back(n.GetString(), n.GetStringLength());
        }
      }
    }
    if (auto mounts = member(item, "Mounts"); mounts && mounts->IsArray()) {
      for (const auto& m : mounts->GetArray()) {
        if (text(m, "Type") != "volume") {
          continue;
        }
        c.volumes.push_back(volume_mount{text(m, "Name"), text(m, "Driver"), text(m, "Destination")});
      }
    }
    out.items.push_back(std::move(c));
  }
  return out;
}

caf::expected<container_event> parse_event(const std::string& json) {
  auto doc = parse(json, "event", rapidjson::kObjectType);
  if (!doc) {
    return doc.error();
  }
  container_event ev;
  ev.action = text(*doc, "Action");
  if (ev.action.empty()) {
    ev.action = text(*doc, "status");
  }
  const auto& actor = object(*doc, "Actor");
  ev.container_id = text(actor, "ID");
  if (ev.container_id.empty()) {
    ev.container_id = text(*doc, "id");
  }
  auto code = text(object(actor, "Attributes"), "exitCode");
  if (!code.empty()) {
    errno = 0;
    char* end = nullptr;
    long n = std::strtol(code.c_str(), &end, 10);
    if (errno == 0 && *end == '\0' && n >= 0 && n <= 255) {
      ev.exit_code = static_cast<int>(n);
    }
  }
  if (auto t = member(*doc, "timeNano"); t && t->IsInt64()) {
    ev.time_nano = t->GetInt64();
  } else if (auto s = member(*doc, "time"); s && s->IsInt64()) {
    ev.time_nano = s->GetInt64() * 1000000000;
  }
  if (ev.action.empty() || ev.container_id.empty()) {
    return malformed("event", "no Action or no Actor.ID: " + json.substr(0, 200));
  }
  return ev;
}

std::string parse_error_message(const std::string& json) {
  rapidjson::Document doc;
  doc.Parse(json.data(), json.size());
  if (doc.HasParseError() || !doc.IsObject()) {
    return {};
  }
  return text(doc, "message");
}

} // namespace berth::docker_engine
