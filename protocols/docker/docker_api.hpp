#pragma once

#include <memory>
#include <string>

#include <caf/actor_system.hpp>

#include "actors/actors.hpp"
#include "actors/release_rules.hpp"
#include "core/telemetry/telemetry.hpp"
#include "protocols/gateway/gateway.hpp"
#include "protocols/http/unix_http_server.hpp"

namespace berth {

/// The dockerd instance that sent a plugin request: make_dockerd_key(pid, start
/// ticks) of its connection's peer (the process that connected: dockerd is the
/// client of the plugin socket) when that process's command is "dockerd"; "" for
/// anything else (a test client, ECS's agent, berth-bench) or an unknown peer, whose
/// mount IDs are then never released automatically.
dockerd_key dockerd_of(const caller& from);

/// The Docker volume plugin endpoints (POST /Plugin.Activate,
/// /VolumeDriver.{Create,Remove,Mount,Unmount,Path,Get,List,Capabilities}).
/// Decodes, sends one message to the registry, encodes the reply. Handled
/// errors answer 200 {"Err":"..."} like dockerd's own plugins; an unknown
/// endpoint 404, a method other than POST 405 (both with Err). Every request
/// counts once in `stats->operations` ("docker", the call without its prefix, the
/// outcome's code, arrival to answer); an unknown endpoint as "other".
class docker_api {
public:
  /// @param stats where requests are counted; null: a private one (tests).
  docker_api(caf::actor_system& sys, registry_actor registry,
             std::shared_ptr<telemetry> stats = nullptr);

  /// A handler_fn for unix_http_server; never blocks. A Mount from a client that
  /// left before its turn is not started; one whose answer cannot reach `from` is
  /// undone (an Unmount of its ID), since dockerd will never Unmount it.
  void handle(const std::string& method, const std::string& target, std::string body,
              reply_fn reply, const caller& from);

private:
  registry_actor registry_;
  gateway gw_;
  std::shared_ptr<telemetry> stats_;
};

} // namespace berth
