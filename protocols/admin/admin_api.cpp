#include "protocols/admin/admin_api.hpp"

#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include "core/errors.hpp"
#include "core/names.hpp"
#include "core/record_json.hpp"
#include "protocols/bridge.hpp"
#include "protocols/docker/docker_codec.hpp"

namespace berth {

namespace {

constexpr const char* json_type = "application/json";
constexpr std::string_view volumes_path = "/v1/volumes";

std::string error_body(std::string_view message) {
  rapidjson::StringBuffer buf;
  rapidjson::Writer<rapidjson::StringBuffer> w{buf};
  w.StartObject();
  w.Key("error");
  w.String(message.data(), static_cast<rapidjson::SizeType>(message.size()));
  w.EndObject();
  return {buf.GetString(), buf.GetSize()};
}

void fail(const reply_fn& reply, unsigned status, std::string_view message) {
  reply(status, json_type, error_body(message));
}

} // namespace

unsigned http_status_of(const caf::error& err) {
  if (err.category() != caf::atom("berth")) {
    return 500;
  }
  switch (static_cast<ec>(err.code())) {
    case ec::invalid_argument: return 400;
    case ec::not_found: return 404;
    case ec::already_exists:
    case ec::in_use: return 409;
    case ec::unavailable: return 503;
    case ec::aborted: return 503;
    case ec::timeout: return 504;
    default: return 500;
  }
}

admin_api::admin_api(caf::actor_system& sys, registry_actor registry)
  : registry_(std::move(registry)), gw_(sys) {
}

void admin_api::handle(const std::string& method, const std::string& target, std::string,
                       reply_fn reply) {
  auto path = std::string_view{target}.substr(0, target.find('?'));
  if (path.size() > 1 && path.back() == '/') {
    path.remove_suffix(1);
  }
  bool is_list = path == volumes_path;
  bool is_one = path.size() > volumes_path.size() + 1 &&
                path.substr(0, volumes_path.size() + 1) == "/v1/volumes/";
  if (!is_list && !is_one) {
    fail(reply, 404, "unknown endpoint " + docker::quote_input(path));
    return;
  }
  if (method != "GET") {
    fail(reply, 405, "method " + docker::quote_input(method) + " not allowed: use GET");
    return;
  }
  auto on_err = [reply](caf::error& err) { fail(reply, http_status_of(err), describe(err)); };
  if (is_list) {
    gw_.ask(
      registry_, query_timeout,
      [reply](std::vector<volume_record>& recs) {
        rapidjson::StringBuffer buf;
        rapidjson::Writer<rapidjson::StringBuffer> w{buf};
        w.StartArray();
        for (const auto& rec : recs) {
          write_record(w, rec);
        }
        w.EndArray();
        reply(200, json_type, std::string{buf.GetString(), buf.GetSize()});
      },
      on_err, atom::list_v);
    return;
  }
  auto name = std::string{path.substr(volumes_path.size() + 1)};
  if (!is_valid_volume_name(name)) {
    fail(reply, 400,
         "invalid volume name " + docker::quote_input(name) +
           ": must match [A-Za-z0-9][A-Za-z0-9_.-]{0,127}");
    return;
  }
  gw_.ask(
    registry_, query_timeout,
    [reply](volume_record& rec) { reply(200, json_type, record_to_json(rec)); }, on_err,
    atom::get_v, std::move(name));
}

} // namespace berth
