#include "protocols/docker/docker_api.hpp"

#include <atomic>

#include "actors/registry_direct.hpp"
#include "core/errors.hpp"
#include "core/text.hpp"
#include "protocols/docker/docker_codec.hpp"
#include "protocols/gateway/gateway.hpp"

namespace berth {

namespace {

using clock = std::chrono::steady_clock;

/// Docker's answer for one of its snapshots, which share its namespace but are no volume.
caf::error not_a_volume(const volume_record& rec) {
  return make_error(ec::not_found, "no such volume: " + rec.name + " (it is a snapshot; "
                                     "berthctl snapshot ls lists it)");
}

/// The List answer: Docker's volumes among `recs`. Its snapshots share its namespace but
/// are no volumes (berthctl snapshot ls lists them).
std::string list_body(const shared_records& recs) {
  shared_records volumes;
  volumes.reserve(recs.size());
  for (const auto& rec : recs) {
    if (owner_of(*rec) == record_owner::docker && rec->kind == record_kind::volume) {
      volumes.push_back(rec);
    }
  }
  return docker::encode_list(volumes);
}

/// One request's answer: writes it and counts it in telemetry::operations once. Its
/// copies share one state; when the last goes without having answered (a callback that
/// threw, a gateway that stopped), the reply is lost: the HTTP layer answers 500, and
/// this counts it in telemetry::docker_replies_lost and logs the request.
class answer {
public:
  answer(reply_fn reply, std::shared_ptr<telemetry> stats, std::string_view operation,
         std::string endpoint)
    : st_(std::make_shared<state>()) {
    st_->reply = std::move(reply);
    st_->stats = std::move(stats);
    st_->operation = operation;
    st_->endpoint = std::move(endpoint);
    st_->arrived = clock::now();
  }

  /// The volume the request names, for the log line of a lost reply.
  void about(const std::string& volume) const {
    st_->volume = volume;
  }

  /// Answers `body` with status 200 and the plugin content type.
  void ok(std::string body) const {
    send(200, std::move(body), {});
  }

  /// Answers a handled error: 200 {"Err":"..."}, which Docker reports as is.
  void fail(const caf::error& err) const {
    send(200, docker::encode_error(describe(err)), err);
  }

  /// Answers a request refused before it reached an endpoint (404, 405).
  void refuse(unsigned status, std::string message) const {
    send(status, docker::encode_error(std::move(message)),
         make_error(ec::invalid_argument, "refused"));
  }

  /// An error callback for ask() that answers through this.
  auto on_error() const {
    return [a = *this](caf::error& err) { a.fail(err); };
  }

  /// The answer of a request the registry answers with atom::ok through a direct_reply
  /// (send_to_registry): Docker's empty success, or the error.
  auto ok_or_error() const {
    return [a = *this](caf::expected<atom::ok> out) {
      if (out) {
        a.ok(docker::encode_ok());
      } else {
        a.fail(out.error());
      }
    };
  }

private:
  struct state {
    reply_fn reply;
    std::shared_ptr<telemetry> stats;
    std::string_view operation; ///< a static string: "mount", "other"
    std::string endpoint;       ///< "/VolumeDriver.Mount"
    std::string volume;         ///< "" until the body is decoded
    clock::time_point arrived;
    std::atomic<bool> answered{false};

    ~state() {
      if (answered.load()) {
        return;
      }
      stats->docker_replies_lost.add(operation);
      // "/VolumeDriver.Mount" reads "Mount" in the log.
      auto call = endpoint.substr(endpoint.find('.') + 1);
      spdlog::error("{} of volume {} lost its reply: answered 500 ({} s after it arrived)",
                    call, volume.empty() ? std::string{"(none named)"} : volume,
                    std::chrono::duration<double>(clock::now() - arrived).count());
    }
  };

  void send(unsigned status, std::string body, const caf::error& err) const {
    st_->answered = true;
    std::chrono::duration<double> took = clock::now() - st_->arrived;
    st_->stats->operations.record("docker", st_->operation, code_of(err), took.count());
    st_->reply(status, docker::content_type, std::move(body));
  }

  std::shared_ptr<state> st_;
};

/// The operation label of a plugin endpoint ("/VolumeDriver.Mount": "mount"), or
/// "other" for an unknown one.
std::string_view operation_of(const std::string& endpoint) {
  static constexpr std::pair<const char*, const char*> endpoints[] = {
    {"/Plugin.Activate", "activate"},      {"/VolumeDriver.Create", "create"},
    {"/VolumeDriver.Remove", "remove"},    {"/VolumeDriver.Mount", "mount"},
    {"/VolumeDriver.Unmount", "unmount"},  {"/VolumeDriver.Path", "path"},
    {"/VolumeDriver.Get", "get"},          {"/VolumeDriver.List", "list"},
    {"/VolumeDriver.Capabilities", "capabilities"}};
  for (const auto& [path, op] : endpoints) {
    if (endpoint == path) {
      return op;
    }
  }
  return other_label;
}

} // namespace

dockerd_key dockerd_of(const caller& from) {
  const auto* peer = from.peer();
  if (peer == nullptr || !peer->known() || peer->command != "dockerd") {
    return {};
  }
  return make_dockerd_key(peer->pid, peer->start_ticks);
}

docker_api::docker_api(caf::actor_system& sys, registry_actor registry,
                       std::shared_ptr<telemetry> stats, volume_routes routes)
    : registry_(std::move(registry)), routes_(std::move(routes)),
      gw_(std::make_shared<gateway>(sys)), stats_(std::move(stats)) {
  if (!stats_) {
    stats_ = std::make_shared<telemetry>(std::vector<std::string>{});
  }
}

template <class R, class OnOk, class OnErr, class Op, class... Ts>
void docker_api::ask_volume(const std::string& name, OnOk on_ok, OnErr on_err, Op op, Ts... xs) {
  // Holds the gateway, not this: a request dropped at shutdown may ask after this is gone.
  auto via_registry = [gw = gw_, registry = registry_, name, on_ok, on_err, op, xs...] {
    gw->ask(registry, transition_timeout, on_ok, on_err, op, name, xs...);
  };
  send_to_volume<R>(
    routes_.handles.get(), name,
    [on_ok, on_err](caf::expected<R> out) mutable {
      if (out) {
        on_ok(*out);
      } else {
        on_err(out.error());
      }
    },
    std::move(via_registry), op, std::move(xs)...);
}

record_directory::entry docker_api::docker_record(const std::string& name) const {
  if (!routes_.directory) {
    return nullptr;
  }
  auto rec = routes_.directory->find(name);
  return rec && owner_of(*rec) == record_owner::docker ? rec : nullptr;
}

void docker_api::handle(const std::string& method, const std::string& target, std::string body,
                        reply_fn reply, const caller& from) {
  auto endpoint = target.substr(0, target.find('?'));
  auto operation = operation_of(endpoint);
  answer a{std::move(reply), stats_, operation, endpoint};
  if (operation == other_label) {
    a.refuse(404, "unknown endpoint " + quote_input(endpoint));
    return;
  }
  if (method != "POST") {
    a.refuse(405, "method " + quote_input(method) + " not allowed on " + endpoint
                    + ": use POST");
    return;
  }
  if (endpoint == "/Plugin.Activate") {
    a.ok(docker::encode_activate());
  } else if (endpoint == "/VolumeDriver.Capabilities") {
    a.ok(docker::encode_capabilities());
  } else if (endpoint == "/VolumeDriver.Create") {
    auto req = docker::decode_create(body);
    if (!req) {
      a.fail(req.error());
      return;
    }
    a.about(req->name);
    send_to_registry<atom::ok>(registry_, a.ok_or_error(), atom::create_v, std::move(req->name),
                               std::move(req->options));
  } else if (endpoint == "/VolumeDriver.Remove") {
    auto req = docker::decode_name(body);
    if (!req) {
      a.fail(req.error());
      return;
    }
    a.about(req->name);
    send_to_registry<atom::ok>(registry_, a.ok_or_error(), atom::remove_v, std::move(req->name),
                               record_owner::docker, record_kind::volume);
  } else if (endpoint == "/VolumeDriver.Mount") {
    auto req = docker::decode_mount(body);
    if (!req) {
      a.fail(req.error());
      return;
    }
    a.about(req->name);
    auto undo = [this, name = req->name, id = req->id](const std::string& why) {
      // dockerd took the Mount as failed and will never Unmount this ID.
      spdlog::warn("volume {}: Mount (id {}) done, but its answer did not reach dockerd ({}); "
                   "unmounting it again", name, short_id(id), why);
      gw_->ask(
        registry_, transition_timeout, [](atom::ok) {},
        [name, id](caf::error& err) {
          spdlog::error("volume {}: undoing the undelivered Mount (id {}) failed: {}", name,
                        short_id(id), describe(err));
        },
        atom::unmount_v, name, id);
    };
    ask_volume<std::string>(
      req->name,
      [a, from, undo](std::string& mountpoint) {
        from.on_gone(undo);
        a.ok(docker::encode_mountpoint(mountpoint));
      },
      a.on_error(), atom::mount_v, std::move(req->id), dockerd_of(from), from);
  } else if (endpoint == "/VolumeDriver.Unmount") {
    auto req = docker::decode_mount(body);
    if (!req) {
      a.fail(req.error());
      return;
    }
    a.about(req->name);
    ask_volume<atom::ok>(
      req->name, [a](atom::ok) { a.ok(docker::encode_ok()); }, a.on_error(), atom::unmount_v,
      std::move(req->id));
  } else if (endpoint == "/VolumeDriver.Path") {
    auto req = docker::decode_name(body);
    if (!req) {
      a.fail(req.error());
      return;
    }
    a.about(req->name);
    auto path = [a](const volume_record& rec) {
      if (rec.kind != record_kind::volume) {
        a.fail(not_a_volume(rec));
        return;
      }
      a.ok(docker::encode_mountpoint(rec.mounted ? rec.mountpoint : std::string{}));
    };
    if (auto rec = docker_record(req->name)) {
      path(*rec);
      return;
    }
    gw_->ask(
      registry_, query_timeout, [path](volume_record& rec) { path(rec); }, a.on_error(),
      atom::get_v, std::move(req->name), record_owner::docker);
  } else if (endpoint == "/VolumeDriver.Get") {
    auto req = docker::decode_name(body);
    if (!req) {
      a.fail(req.error());
      return;
    }
    a.about(req->name);
    auto get = [a, stats = stats_](const volume_record& rec) {
      if (rec.kind != record_kind::volume) {
        a.fail(not_a_volume(rec));
        return;
      }
      a.ok(docker::encode_get(rec, stats->health.of(rec.name)));
    };
    if (auto rec = docker_record(req->name)) {
      get(*rec);
      return;
    }
    gw_->ask(
      registry_, query_timeout, [get](volume_record& rec) { get(rec); }, a.on_error(), atom::get_v,
      std::move(req->name), record_owner::docker);
  } else { // "/VolumeDriver.List"
    if (routes_.directory) {
      // The directory holds what the registry would list; read here, with no actor, and
      // encoded once per change: 10,000 volumes take milliseconds to encode.
      a.ok(*list_memo_.get(*routes_.directory, list_body));
      return;
    }
    gw_->ask(
      registry_, query_timeout, [a](shared_records& recs) { a.ok(list_body(recs)); }, a.on_error(),
      atom::list_v, record_owner::docker);
  }
}

} // namespace berth
