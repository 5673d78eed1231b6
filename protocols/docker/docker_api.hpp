#pragma once

#include <string>

#include <caf/actor_system.hpp>

#include "actors/actors.hpp"
#include "protocols/bridge.hpp"
#include "protocols/http/unix_http_server.hpp"

namespace berth {

/// The Docker volume plugin endpoints (POST /Plugin.Activate,
/// /VolumeDriver.{Create,Remove,Mount,Unmount,Path,Get,List,Capabilities}).
/// Decodes, sends one message to the registry, encodes the reply. Handled
/// errors answer 200 {"Err":"..."} like dockerd's own plugins; an unknown
/// endpoint 404, a method other than POST 405 (both with Err).
class docker_api {
public:
  docker_api(caf::actor_system& sys, registry_actor registry);

  /// A handler_fn for unix_http_server; never blocks. A Mount from a client that
  /// left before its turn is not started; one whose answer cannot reach `from` is
  /// undone (an Unmount of its ID), since dockerd will never Unmount it.
  void handle(const std::string& method, const std::string& target, std::string body,
              reply_fn reply, const caller& from);

private:
  registry_actor registry_;
  gateway gw_;
};

} // namespace berth
