#include "protocols/admin/admin_api.hpp"

#include <functional>

#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include "core/errors.hpp"
#include "core/json_text.hpp"
#include "core/names.hpp"
#include "core/record_json.hpp"
#include "core/text.hpp"
#include "protocols/admin/admin_codec.hpp"
#include "protocols/admin/admin_telemetry.hpp"
#include "protocols/gateway/gateway.hpp"

namespace berth {

namespace {

constexpr const char* json_type = "application/json";
constexpr std::string_view volumes_path = "/v1/volumes";
constexpr std::string_view snapshots_path = "/v1/snapshots";
constexpr std::string_view unclaimed_path = "/v1/unclaimed";

/// What a request asks for: its route (an operation name of telemetry, or "other"),
/// the method the route takes, and for a volume route the volume's name.
struct parsed_target {
  const char* route = other_label;
  const char* method = "GET";
  std::string_view name;
};

/// What follows `collection` + "/" in `path` ("" when `path` is not below it).
std::string_view below(std::string_view path, std::string_view collection) {
  if (path.size() <= collection.size() + 1 || path.substr(0, collection.size()) != collection
      || path[collection.size()] != '/') {
    return {};
  }
  return path.substr(collection.size() + 1);
}

/// A collection's DELETE route of one member, `collection`/NAME (a name holds no '/').
void member_delete(parsed_target& t, std::string_view name, const char* route) {
  t.name = name;
  if (name.find('/') == std::string_view::npos) {
    t.route = route;
    t.method = "DELETE";
  }
}

parsed_target parse_target(std::string_view path) {
  parsed_target t;
  if (path == snapshots_path) {
    t.route = "snapshots";
  } else if (auto snapshot = below(path, snapshots_path); !snapshot.empty()) {
    member_delete(t, snapshot, "snapshot_remove");
  } else if (path == unclaimed_path) {
    t.route = "unclaimed";
  } else if (auto volume = below(path, unclaimed_path); !volume.empty()) {
    member_delete(t, volume, "unclaimed_remove");
  } else if (path == "/v1/status") {
    t.route = "status";
  } else if (path == "/v1/operations") {
    t.route = "operations";
  } else if (path == volumes_path) {
    t.route = "list";
  } else if (auto rest = below(path, volumes_path); !rest.empty()) {
    // /v1/volumes/NAME or /v1/volumes/NAME/ACTION (a name holds no '/').
    auto slash = rest.find('/');
    t.name = rest.substr(0, slash);
    auto action = slash == std::string_view::npos ? std::string_view{} : rest.substr(slash + 1);
    if (action.empty()) {
      t.route = "get";
    } else if (action == "resize" || action == "modify" || action == "release"
               || action == "snapshot") {
      t.route = action == "resize"    ? "resize"
                : action == "modify"  ? "modify"
                : action == "release" ? "release"
                                      : "snapshot";
      t.method = "POST";
    }
  }
  return t;
}

} // namespace

unsigned http_status_of(const caf::error& err) {
  auto code = berth_code(err);
  if (!code) {
    return 500;
  }
  switch (*code) {
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

// -- responder -----------------------------------------------------------------------

admin_api::responder::responder(reply_fn reply, std::shared_ptr<telemetry> stats,
                                const char* route)
  : reply_(std::move(reply)), stats_(std::move(stats)), route_(route),
    start_(std::chrono::steady_clock::now()) {
}

void admin_api::responder::ok(std::string body) const {
  answer(200, std::move(body), code_of(caf::error{}));
}

void admin_api::responder::fail(unsigned status, const caf::error& err) const {
  answer(status, admin::encode_error(describe(err)), code_of(err));
}

void admin_api::responder::fail(const caf::error& err) const {
  fail(http_status_of(err), err);
}

void admin_api::responder::answer(unsigned status, std::string body,
                                  std::string_view code) const {
  auto seconds =
    std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  stats_->operations.record("admin", route_, code, seconds);
  reply_(status, json_type, std::move(body));
}

// -- dispatch ------------------------------------------------------------------------

admin_api::admin_api(caf::actor_system& sys, registry_actor registry,
                     std::shared_ptr<telemetry> stats, std::shared_ptr<operator_release_desk> desk,
                     std::shared_ptr<unclaimed_desk> unclaimed)
  : registry_(std::move(registry)), desk_(std::move(desk)), unclaimed_(std::move(unclaimed)),
    stats_(std::move(stats)), gw_(sys) {
}

void admin_api::handle(const std::string& method, const std::string& target, std::string body,
                       reply_fn reply) {
  auto path = std::string_view{target}.substr(0, target.find('?'));
  if (path.size() > 1 && path.back() == '/') {
    path.remove_suffix(1);
  }
  auto t = parse_target(path);
  responder r{std::move(reply), stats_, t.route};
  if (t.route == std::string_view{other_label}) {
    auto hint = t.name.empty() ? "" : ": a volume has /resize, /modify, /release and /snapshot";
    r.fail(404, make_error(ec::not_found,
                           "unknown endpoint " + quote_input(path) + hint));
    return;
  }
  if (method != t.method) {
    r.fail(405, make_error(ec::unsupported, "method " + quote_input(method)
                                              + " not allowed: use " + t.method));
    return;
  }
  std::string_view route = t.route;
  if (route == "status") {
    r.ok(admin::status_json(*stats_, std::chrono::system_clock::now()));
    return;
  }
  if (route == "operations") {
    r.ok(admin::operations_json(*stats_, std::chrono::steady_clock::now()));
    return;
  }
  if (route == "list") {
    list(std::move(r));
    return;
  }
  if (route == "snapshots") {
    snapshots(std::move(r));
    return;
  }
  if (route == "unclaimed") {
    unclaimed(std::move(r));
    return;
  }
  auto name = std::string{t.name};
  if (!is_valid_volume_name(name)) {
    r.fail(make_error(ec::invalid_argument, invalid_name_message("volume", name)));
    return;
  }
  if (route == "get") {
    get(std::move(name), std::move(r));
    return;
  }
  if (route == "snapshot_remove") {
    remove_snapshot(std::move(name), std::move(r));
    return;
  }
  if (route == "unclaimed_remove") {
    remove_unclaimed(std::move(name), std::move(r));
    return;
  }
  if (route == "snapshot") {
    auto snapshot = admin::decode_snapshot(body);
    if (!snapshot) {
      r.fail(400, snapshot.error());
      return;
    }
    if (!is_valid_volume_name(*snapshot)) {
      r.fail(make_error(ec::invalid_argument, invalid_name_message("snapshot", *snapshot)));
      return;
    }
    snapshot_volume(std::move(name), std::move(*snapshot), std::move(r));
    return;
  }
  if (route == "release") {
    auto id = admin::decode_release(body);
    if (!id) {
      r.fail(400, id.error());
      return;
    }
    release(std::move(name), std::move(*id), std::move(r));
    return;
  }
  modify_request req; // owner unset: the admin may modify any record
  if (route == "resize") {
    auto size = admin::decode_resize(body);
    if (!size) {
      r.fail(400, size.error());
      return;
    }
    req.required_bytes = *size;
  } else {
    auto params = admin::decode_modify(body);
    if (!params) {
      r.fail(400, params.error());
      return;
    }
    req.parameters = std::move(*params);
  }
  modify(std::move(name), std::move(req), std::move(r));
}

// -- routes --------------------------------------------------------------------------

namespace {

/// Writes "used_bytes", "allocated_bytes" and "direct_io" of `rec` as far as the usage
/// sampler measured them (a mounted block volume; a directory volume has no figure), and
/// its "health": "healthy", or "abnormal" with its "conditions" ({"reason", "message"}).
auto observed_of(const telemetry& stats, const volume_record& rec) {
  return [figure = stats.usage.of(rec.name),
          conditions = stats.health.of(rec.name)](rapidjson::Writer<rapidjson::StringBuffer>& w) {
    write_health(w, conditions);
    if (!figure) {
      return;
    }
    w.Key("used_bytes");
    w.Uint64(figure->used_bytes);
    if (figure->allocated_bytes != 0) {
      w.Key("allocated_bytes");
      w.Uint64(figure->allocated_bytes);
    }
    if (figure->direct_io != direct_io_state::unknown) {
      w.Key("direct_io");
      w.Bool(figure->direct_io == direct_io_state::on);
    }
  };
}

/// The record as the admin API shows it: its owner, every field an operator looks for
/// (size, mutable parameters, modifications) even when 0 or empty, and its used bytes.
std::string admin_json(const telemetry& stats, volume_record& rec) {
  rec.owner = owner_of(rec); // shown also for records of older state
  rapidjson::StringBuffer buf;
  rapidjson::Writer<rapidjson::StringBuffer> w{buf};
  write_record(w, rec, record_shape::full, observed_of(stats, rec));
  return {buf.GetString(), buf.GetSize()};
}

/// `recs` as the admin API shows them, those that `keep` keeps, as a JSON array.
std::string admin_array(const telemetry& stats, const shared_records& recs,
                        const std::function<bool(const volume_record&)>& keep) {
  rapidjson::StringBuffer buf;
  rapidjson::Writer<rapidjson::StringBuffer> w{buf};
  w.StartArray();
  for (const auto& rec : recs) {
    if (!keep(*rec)) {
      continue;
    }
    if (rec->owner == record_owner::unset) {
      auto shown = *rec;
      shown.owner = owner_of(shown); // shown also for records of older state
      write_record(w, shown, record_shape::full, observed_of(stats, shown));
    } else {
      write_record(w, *rec, record_shape::full, observed_of(stats, *rec));
    }
  }
  w.EndArray();
  return {buf.GetString(), buf.GetSize()};
}

/// Answers with the record as the admin API shows it.
auto record_answer(admin_api::responder r, std::shared_ptr<telemetry> stats) {
  return [r = std::move(r), stats = std::move(stats)](volume_record& rec) {
    r.ok(admin_json(*stats, rec));
  };
}

auto on_error(admin_api::responder r) {
  return [r = std::move(r)](caf::error& err) { r.fail(err); };
}

} // namespace

void admin_api::list(responder r) {
  gw_.ask(
    registry_, query_timeout,
    [r, stats = stats_](shared_records& recs) {
      r.ok(admin_array(*stats, recs, [](const volume_record&) { return true; }));
    },
    on_error(r), atom::list_v);
}

void admin_api::snapshots(responder r) {
  gw_.ask(
    registry_, query_timeout,
    [r, stats = stats_](shared_records& recs) {
      r.ok(admin_array(*stats, recs, [](const volume_record& rec) {
        return rec.kind == record_kind::snapshot;
      }));
    },
    on_error(r), atom::list_v, record_owner::docker);
}

void admin_api::snapshot_volume(std::string volume, std::string snapshot, responder r) {
  // Docker's snapshots are made as CSI's are, in Docker's namespace: the registry reads
  // the volume (Docker's only) and the snapshot lives on its backend.
  volume_spec spec;
  spec.kind = record_kind::snapshot;
  spec.owner = record_owner::docker;
  spec.source = volume_source(std::move(volume));
  gw_.ask(
    registry_, transition_timeout, record_answer(r, stats_),
    on_error(r), atom::create_v, std::move(snapshot), std::move(spec));
}

void admin_api::remove_snapshot(std::string name, responder r) {
  gw_.ask(
    registry_, transition_timeout,
    [r, name](atom::ok) { r.ok("{\"removed\":" + json_quote(name) + "}"); }, on_error(r),
    atom::remove_v, name, record_owner::docker, record_kind::snapshot);
}

void admin_api::get(std::string name, responder r) {
  gw_.ask(
    registry_, query_timeout, record_answer(r, stats_), on_error(r),
    atom::get_v, std::move(name));
}

void admin_api::modify(std::string name, modify_request req, responder r) {
  // A transition: the mailbox's window and the backend call bound it, not the adapter.
  gw_.ask(
    registry_, transition_timeout, record_answer(r, stats_),
    on_error(r), atom::modify_v, std::move(name), std::move(req));
}

void admin_api::release(std::string name, std::string id, responder r) {
  if (!desk_) {
    r.fail(make_error(ec::unavailable, "this berthd cannot release mount IDs (no release desk)"));
    return;
  }
  // The desk answers from its own thread, after asking dockerd and the volume.
  desk_->release(name, id, [r, name, id](caf::expected<operator_release_result> res) {
    if (!res) {
      r.fail(res.error());
      return;
    }
    r.ok(admin::encode_release(name, id, res->dropped, res->checked, res->unchecked_why));
  });
}

} // namespace berth
