#pragma once

#include <memory>
#include <string>

#include <caf/actor_system.hpp>

#include "actors/actors.hpp"
#include "actors/release_rules.hpp"
#include "actors/volume_handles.hpp"
#include "core/directory_memo.hpp"
#include "core/record_directory.hpp"
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

/// What lets the Docker API go around the registry (docs/design.md, "Three hops"): Mount
/// and Unmount go straight to the volume's actor, Path and Get read its committed record.
/// Empty: every request goes through the registry (tests with a stand-in registry).
struct volume_routes {
  std::shared_ptr<const volume_handles> handles;
  std::shared_ptr<const record_directory> directory;
};

/// The Docker volume plugin endpoints (POST /Plugin.Activate,
/// /VolumeDriver.{Create,Remove,Mount,Unmount,Path,Get,List,Capabilities}).
/// Decodes, sends one message (a Mount or an Unmount to the volume, when the routes
/// know it; anything else to the registry) or reads the record directory (Path, Get,
/// List: encoded once per change of the directory), encodes the reply. Handled
/// errors answer 200 {"Err":"..."} like dockerd's own plugins; an unknown
/// endpoint 404, a method other than POST 405 (both with Err). Every request
/// counts once in `stats->operations` ("docker", the call without its prefix, the
/// outcome's code, arrival to answer); an unknown endpoint as "other".
class docker_api {
public:
  /// @param stats where requests are counted; null: a private one (tests).
  /// @param routes the registry's handles and directory; empty: always the registry.
  docker_api(caf::actor_system& sys, registry_actor registry,
             std::shared_ptr<telemetry> stats = nullptr, volume_routes routes = {});

  /// A handler_fn for unix_http_server; never blocks. A Mount from a client that
  /// left before its turn is not started; one whose answer cannot reach `from` is
  /// undone (an Unmount of its ID), since dockerd will never Unmount it.
  void handle(const std::string& method, const std::string& target, std::string body,
              reply_fn reply, const caller& from);

private:
  /// Sends `xs...` straight to the actor of Docker volume `name` when the handles know
  /// it, else (or when that actor had quit) to the registry with `name` before them;
  /// `on_ok(result)` or `on_err(error)` once either way.
  template <class R, class OnOk, class OnErr, class Op, class... Ts>
  void ask_volume(const std::string& name, OnOk on_ok, OnErr on_err, Op op, Ts... xs);

  /// The committed record of Docker volume `name` when the directory holds it; else null,
  /// and the registry answers (no such volume, another owner's record).
  record_directory::entry docker_record(const std::string& name) const;

  registry_actor registry_;
  volume_routes routes_;
  std::shared_ptr<gateway> gw_;
  std::shared_ptr<telemetry> stats_;
  directory_memo list_memo_; ///< the List answer, while routes_.directory does not change
};

} // namespace berth
