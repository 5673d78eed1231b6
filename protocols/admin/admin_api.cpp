#include "protocols/admin/admin_api.hpp"

#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include "core/errors.hpp"
#include "core/names.hpp"
#include "core/record_json.hpp"
#include "protocols/admin/admin_codec.hpp"
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
    case ec::invalid_argument:
    case ec::out_of_range: return 400; // out_of_range: a shrink, a size beyond the backend's
    case ec::not_found: return 404;
    case ec::already_exists:
    case ec::in_use:
    case ec::failed_precondition:
    case ec::unsupported: return 409; // the volume (or its backend) does not allow it
    case ec::resource_exhausted: return 429; // a bound or a cooldown: the message says when
    case ec::unavailable: return 503;
    case ec::aborted: return 503;
    case ec::timeout: return 504;
    default: return 500;
  }
}

admin_api::admin_api(caf::actor_system& sys, registry_actor registry)
  : registry_(std::move(registry)), gw_(sys) {
}

void admin_api::handle(const std::string& method, const std::string& target, std::string body,
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
  // /v1/volumes/NAME or /v1/volumes/NAME/ACTION (a name holds no '/').
  auto rest = is_one ? path.substr(volumes_path.size() + 1) : std::string_view{};
  auto slash = rest.find('/');
  auto action = slash == std::string_view::npos ? std::string_view{} : rest.substr(slash + 1);
  if (!action.empty() && action != "resize" && action != "modify") {
    fail(reply, 404, "unknown endpoint " + docker::quote_input(path)
                       + ": a volume has /resize and /modify");
    return;
  }
  auto allowed = action.empty() ? "GET" : "POST";
  if (method != allowed) {
    fail(reply, 405, "method " + docker::quote_input(method) + " not allowed: use " + allowed);
    return;
  }
  if (is_list) {
    list(std::move(reply));
    return;
  }
  auto name = std::string{rest.substr(0, slash)};
  if (!is_valid_volume_name(name)) {
    fail(reply, 400,
         "invalid volume name " + docker::quote_input(name) +
           ": must match [A-Za-z0-9][A-Za-z0-9_.-]{0,127}");
    return;
  }
  if (action.empty()) {
    get(std::move(name), std::move(reply));
    return;
  }
  modify_request req; // owner "": the admin may modify any record
  if (action == "resize") {
    auto size = admin::decode_resize(body);
    if (!size) {
      fail(reply, 400, describe(size.error()));
      return;
    }
    req.required_bytes = *size;
  } else {
    auto params = admin::decode_modify(body);
    if (!params) {
      fail(reply, 400, describe(params.error()));
      return;
    }
    req.parameters = std::move(*params);
  }
  modify(std::move(name), std::move(req), std::move(reply));
}

// -- routes --------------------------------------------------------------------------

namespace {

/// The record as the admin API shows it: its owner, and every field an operator
/// looks for (size, mutable parameters, modifications) even when 0 or empty.
std::string admin_json(volume_record& rec) {
  rec.owner = owner_of(rec); // shown also for records of older state
  return record_to_json(rec, record_shape::full);
}

auto on_error(reply_fn reply) {
  return [reply = std::move(reply)](caf::error& err) {
    fail(reply, http_status_of(err), describe(err));
  };
}

} // namespace

void admin_api::list(reply_fn reply) {
  gw_.ask(
    registry_, query_timeout,
    [reply](std::vector<volume_record>& recs) {
      rapidjson::StringBuffer buf;
      rapidjson::Writer<rapidjson::StringBuffer> w{buf};
      w.StartArray();
      for (auto& rec : recs) {
        rec.owner = owner_of(rec); // shown also for records of older state
        write_record(w, rec, record_shape::full);
      }
      w.EndArray();
      reply(200, json_type, std::string{buf.GetString(), buf.GetSize()});
    },
    on_error(reply), atom::list_v);
}

void admin_api::get(std::string name, reply_fn reply) {
  gw_.ask(
    registry_, query_timeout,
    [reply](volume_record& rec) { reply(200, json_type, admin_json(rec)); }, on_error(reply),
    atom::get_v, std::move(name));
}

void admin_api::modify(std::string name, modify_request req, reply_fn reply) {
  // A transition: the mailbox's window and the backend call bound it, not the adapter.
  gw_.ask(
    registry_, transition_timeout,
    [reply](volume_record& rec) { reply(200, json_type, admin_json(rec)); }, on_error(reply),
    atom::modify_v, std::move(name), std::move(req));
}

} // namespace berth
