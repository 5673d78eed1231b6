#include "protocols/docker/docker_api.hpp"

#include <algorithm>

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
                        reply_fn reply) {
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
      on_error(reply), atom::remove_v, std::move(req->name), std::string{kind_volume});
  } else if (endpoint == "/VolumeDriver.Mount") {
    auto req = docker::decode_mount(body);
    if (!req) {
      fail(reply, req.error());
      return;
    }
    gw_.ask(
      registry_, transition_timeout,
      [reply](std::string& mountpoint) { ok(reply, docker::encode_mountpoint(mountpoint)); },
      on_error(reply), atom::mount_v, std::move(req->name), std::move(req->id), caller{});
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
      on_error(reply), atom::get_v, std::move(req->name));
  } else if (endpoint == "/VolumeDriver.Get") {
    auto req = docker::decode_name(body);
    if (!req) {
      fail(reply, req.error());
      return;
    }
    gw_.ask(
      registry_, query_timeout,
      [reply](volume_record& rec) {
        if (rec.kind != kind_volume) {
          fail(reply, make_error(ec::not_found, "no such volume: " + rec.name));
          return;
        }
        ok(reply, docker::encode_get(rec));
      },
      on_error(reply), atom::get_v, std::move(req->name));
  } else { // "/VolumeDriver.List"
    gw_.ask(
      registry_, query_timeout,
      [reply](std::vector<volume_record>& recs) {
        // CSI snapshots share the name space but are not volumes Docker can use.
        recs.erase(std::remove_if(recs.begin(), recs.end(),
                                  [](const volume_record& r) { return r.kind != kind_volume; }),
                   recs.end());
        ok(reply, docker::encode_list(recs));
      },
      on_error(reply), atom::list_v);
  }
}

} // namespace berth
