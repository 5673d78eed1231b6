#include "protocols/docker/docker_api.hpp"

#include "core/errors.hpp"
#include "protocols/bridge.hpp"
#include "protocols/docker/docker_codec.hpp"

namespace berth {

namespace {

/// Answers `body` with status 200 and the plugin content type.
void ok(const reply_fn& reply, std::string body) {
  reply(200, docker::content_type, std::move(body));
}

/// Answers a handled error: 200 {"Err":"..."}, which Docker reports as is.
void fail(const reply_fn& reply, const caf::error& err) {
  reply(200, docker::content_type, docker::encode_error(describe(err)));
}

/// An error callback for ask() that answers through `reply`.
auto on_error(reply_fn reply) {
  return [reply](caf::error& err) { fail(reply, err); };
}

} // namespace

docker_api::docker_api(caf::actor_system& sys, registry_actor registry)
  : registry_(std::move(registry)), gw_(sys) {
}

void docker_api::handle(const std::string& method, const std::string& target, std::string body,
                        reply_fn reply, const caller& from) {
  auto endpoint = target.substr(0, target.find('?'));
  static constexpr const char* endpoints[] = {
    "/Plugin.Activate",     "/VolumeDriver.Create", "/VolumeDriver.Remove",
    "/VolumeDriver.Mount",  "/VolumeDriver.Unmount", "/VolumeDriver.Path",
    "/VolumeDriver.Get",    "/VolumeDriver.List",   "/VolumeDriver.Capabilities"};
  bool known = false;
  for (const char* e : endpoints) {
    known = known || endpoint == e;
  }
  if (!known) {
    reply(404, docker::content_type,
          docker::encode_error("unknown endpoint " + docker::quote_input(endpoint)));
    return;
  }
  if (method != "POST") {
    reply(405, docker::content_type,
          docker::encode_error("method " + docker::quote_input(method) + " not allowed on " +
                               endpoint + ": use POST"));
    return;
  }
  if (endpoint == "/Plugin.Activate") {
    ok(reply, docker::encode_activate());
  } else if (endpoint == "/VolumeDriver.Capabilities") {
    ok(reply, docker::encode_capabilities());
  } else if (endpoint == "/VolumeDriver.Create") {
    auto req = docker::decode_create(body);
    if (!req) {
      fail(reply, req.error());
      return;
    }
    gw_.ask(
      registry_, transition_timeout, [reply](atom::ok) { ok(reply, docker::encode_ok()); },
      on_error(reply), atom::create_v, std::move(req->name), std::move(req->options));
  } else if (endpoint == "/VolumeDriver.Remove") {
    auto req = docker::decode_name(body);
    if (!req) {
      fail(reply, req.error());
      return;
    }
    gw_.ask(
      registry_, transition_timeout, [reply](atom::ok) { ok(reply, docker::encode_ok()); },
      on_error(reply), atom::remove_v, std::move(req->name), std::string{owner_docker},
      record_kind::volume);
  } else if (endpoint == "/VolumeDriver.Mount") {
    auto req = docker::decode_mount(body);
    if (!req) {
      fail(reply, req.error());
      return;
    }
    auto undo = [this, name = req->name, id = req->id](const std::string& why) {
      // dockerd took the Mount as failed and will never Unmount this ID.
      spdlog::warn("volume {}: Mount (id {}) done, but its answer did not reach dockerd ({}); "
                   "unmounting it again", name, id.substr(0, 12), why);
      gw_.ask(
        registry_, transition_timeout, [](atom::ok) {},
        [name, id](caf::error& err) {
          spdlog::error("volume {}: undoing the undelivered Mount (id {}) failed: {}", name,
                        id.substr(0, 12), describe(err));
        },
        atom::unmount_v, name, id);
    };
    gw_.ask(
      registry_, transition_timeout,
      [reply, from, undo](std::string& mountpoint) {
        from.on_gone(undo);
        ok(reply, docker::encode_mountpoint(mountpoint));
      },
      on_error(reply), atom::mount_v, std::move(req->name), std::move(req->id), from);
  } else if (endpoint == "/VolumeDriver.Unmount") {
    auto req = docker::decode_mount(body);
    if (!req) {
      fail(reply, req.error());
      return;
    }
    gw_.ask(
      registry_, transition_timeout, [reply](atom::ok) { ok(reply, docker::encode_ok()); },
      on_error(reply), atom::unmount_v, std::move(req->name), std::move(req->id));
  } else if (endpoint == "/VolumeDriver.Path") {
    auto req = docker::decode_name(body);
    if (!req) {
      fail(reply, req.error());
      return;
    }
    gw_.ask(
      registry_, query_timeout,
      [reply](volume_record& rec) {
        ok(reply, docker::encode_mountpoint(rec.mounted ? rec.mountpoint : std::string{}));
      },
      on_error(reply), atom::get_v, std::move(req->name), std::string{owner_docker});
  } else if (endpoint == "/VolumeDriver.Get") {
    auto req = docker::decode_name(body);
    if (!req) {
      fail(reply, req.error());
      return;
    }
    gw_.ask(
      registry_, query_timeout,
      [reply](volume_record& rec) {
        ok(reply, docker::encode_get(rec));
      },
      on_error(reply), atom::get_v, std::move(req->name), std::string{owner_docker});
  } else { // "/VolumeDriver.List"
    gw_.ask(
      registry_, query_timeout,
      [reply](std::vector<volume_record>& recs) { ok(reply, docker::encode_list(recs)); },
      on_error(reply), atom::list_v, std::string{owner_docker});
  }
}

} // namespace berth
