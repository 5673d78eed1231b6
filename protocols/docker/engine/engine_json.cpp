#include "protocols/docker/engine/engine_json.hpp"

#include <cerrno>
#include <cstdint>
#include <cstdlib>

#include <rapidjson/document.h>
#include <rapidjson/error/en.h>

#include "core/errors.hpp"
#include "core/json_text.hpp"

namespace berth::docker_engine {

namespace {

using value = rapidjson::Value;

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
  info.id = json_text(*doc, "ID");
  info.root_dir = json_text(*doc, "DockerRootDir");
  info.server_version = json_text(*doc, "ServerVersion");
  info.system_time = json_text(*doc, "SystemTime");
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
    c.id = json_text(item, "Id");
    if (c.id.empty()) {
      return malformed("container list", "an entry without Id");
    }
    c.state = json_text(item, "State");
    if (auto names = json_member(item, "Names"); names && names->IsArray()) {
      for (const auto& n : names->GetArray()) {
        if (n.IsString()) {
          c.names.emplace_back(n.GetString(), n.GetStringLength());
        }
      }
    }
    if (auto mounts = json_member(item, "Mounts"); mounts && mounts->IsArray()) {
      for (const auto& m : mounts->GetArray()) {
        if (json_text(m, "Type") != "volume") {
          continue;
        }
        c.volumes.push_back(volume_mount{json_text(m, "Name"), json_text(m, "Driver"), json_text(m, "Destination")});
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
  ev.action = json_text(*doc, "Action");
  if (ev.action.empty()) {
    ev.action = json_text(*doc, "status");
  }
  const auto& actor = json_object(*doc, "Actor");
  ev.container_id = json_text(actor, "ID");
  if (ev.container_id.empty()) {
    ev.container_id = json_text(*doc, "id");
  }
  auto code = json_text(json_object(actor, "Attributes"), "exitCode");
  if (!code.empty()) {
    errno = 0;
    char* end = nullptr;
    long n = std::strtol(code.c_str(), &end, 10);
    if (errno == 0 && *end == '\0' && n >= 0 && n <= 255) {
      ev.exit_code = static_cast<int>(n);
    }
  }
  if (auto t = json_member(*doc, "timeNano"); t && t->IsInt64()) {
    ev.time_nano = t->GetInt64();
  } else if (auto s = json_member(*doc, "time"); s && s->IsInt64()) {
    // Seconds that would overflow as nanoseconds (or lie before 1970) are no time at all.
    constexpr int64_t nano = 1000000000;
    if (auto secs = s->GetInt64(); secs >= 0 && secs <= INT64_MAX / nano) {
      ev.time_nano = secs * nano;
    }
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
  return json_text(doc, "message");
}

} // namespace berth::docker_engine
