#pragma once

// What berth needs from the Docker Engine API (dockerd's own socket, not the plugin protocol),
// typed. protocols/docker/engine/engine_client implements it over a unix socket (Boost.Beast,
// API version pinned to /v1.41); later code and its tests can use a stand-in.

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include <caf/expected.hpp>

#include "protocols/docker/engine/engine_instance.hpp"
#include "protocols/docker/engine/stop_signal.hpp"

namespace berth::docker_engine {

/// The API version every path is pinned to ("/v1.41/info"): dockerd 20.10's.
inline constexpr const char* api_version = "1.41";

/// GET /_ping: the server's headers.
struct ping_reply {
  std::string api_version;   ///< the Api-Version header ("1.41")
  std::string server;        ///< the Server header ("Docker/20.10.24+dfsg1 (linux)")
  engine_instance instance;  ///< the dockerd that answered
};

/// GET /info: the fields berth reads.
struct engine_info {
  std::string id;              ///< ID: the engine's ID (kept across restarts: it does NOT tell instances apart)
  std::string root_dir;        ///< DockerRootDir
  std::string server_version;  ///< ServerVersion
  std::string system_time;     ///< SystemTime (RFC 3339 with nanoseconds)
  engine_instance instance;    ///< the dockerd that answered
};

/// One mount of type "volume" of a container (bind and tmpfs mounts are left out).
struct volume_mount {
  std::string name;         ///< Name: the volume's name
  std::string driver;       ///< Driver: "local", or the plugin's name
  std::string destination;  ///< Destination: the path in the container
};

/// One entry of GET /containers/json?all=1.
struct container {
  std::string id;                   ///< Id (64 hex)
  std::vector<std::string> names;   ///< Names ("/c1")
  std::string state;                ///< State: created, running, paused, restarting, removing, exited, dead
  std::vector<volume_mount> volumes;

  /// State is "running" (or "paused" or "restarting": its mounts are held).
  bool holds_mounts() const;
};

/// GET /containers/json?all=1.
struct container_list {
  std::vector<container> items;
  engine_instance instance;  ///< the dockerd that answered
};

/// One line of GET /events, filtered to type container.
struct container_event {
  std::string action;        ///< Action: create, start, kill, die, stop, destroy, ... ("exec_start: sh" for execs)
  std::string container_id;  ///< Actor.ID
  int exit_code = -1;        ///< Actor.Attributes.exitCode (die), -1 when absent
  int64_t time_nano = 0;     ///< timeNano
};

/// What the events stream reports to its caller.
struct event_handler {
  /// The stream is open (dockerd answered 200), from this instance. Optional.
  std::function<void(const engine_instance&)> on_open;
  /// One container event, in the order dockerd sent them.
  std::function<void(const container_event&)> on_event;
};

/// How an events stream that did not fail ended.
enum class events_end {
  closed,   ///< dockerd ended the stream (it is stopping, or the connection dropped after the 200)
  stopped,  ///< the stop signal was raised
  idle,     ///< no byte came for the idle bound: the client ended it, to open it again
};

/// Errors: transport (absent socket, refused, reset) is ec::unavailable, a call past its time is
/// ec::timeout; both name the socket path and the step. A non-2xx answer names the status and
/// dockerd's message. A body that is not the JSON expected is ec::unavailable naming the call.
class engine_api {
public:
  virtual ~engine_api() = default;

  /// The socket path or URL this API talks to, for logs ("unix:///var/run/docker.sock").
  virtual std::string describe() const = 0;

  /// GET /_ping.
  virtual caf::expected<ping_reply> ping() = 0;

  /// GET /v1.41/info.
  virtual caf::expected<engine_info> info() = 0;

  /// GET /v1.41/containers/json?all=1.
  virtual caf::expected<container_list> containers() = 0;

  /// GET /v1.41/events?filters={"type":["container"]}[&since=...]: calls the handler for each
  /// event until dockerd ends the stream or `stop` is raised (from any thread). Blocks.
  /// @param since_nano when not 0, dockerd replays the events it still holds from that time on.
  virtual caf::expected<events_end> events(const event_handler& handler, stop_signal& stop,
                                           int64_t since_nano = 0) = 0;
};

} // namespace berth::docker_engine
