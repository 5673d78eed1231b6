#pragma once

// engine_api over dockerd's unix socket: Boost.Beast, one connection per call (closed by the
// client once the answer is read), each on its own io_context, every step (connect, write, each read) bounded by the
// call's timeout; past it the socket is closed and the call is ec::timeout. The events stream
// is bounded until its 200 header, then runs until dockerd ends it, the stop signal is
// raised, or it stays silent for the idle bound (events_end::idle). Calls on one client may run on several threads at once.

#include <chrono>
#include <string>

#include "core/limits.hpp"
#include "protocols/docker/engine/engine_api.hpp"

namespace berth::docker_engine {

/// The real Docker Engine API client.
class engine_client : public engine_api {
public:
  /// Per-call bound, and the events stream's idle bound; tests shorten them.
  struct options {
    std::chrono::milliseconds call_timeout = limits::docker_api_call_timeout;
    std::chrono::milliseconds events_idle = limits::docker_events_idle;
  };

  /// @param socket_path dockerd's socket ("/var/run/docker.sock"; see parse_api_url).
  explicit engine_client(std::string socket_path, options opts);
  explicit engine_client(std::string socket_path) : engine_client(std::move(socket_path), options{}) {
  }

  /// "unix:///PATH".
  std::string describe() const override;

  caf::expected<ping_reply> ping() override;
  caf::expected<engine_info> info() override;
  caf::expected<container_list> containers() override;
  caf::expected<events_end> events(const event_handler& handler, stop_signal& stop,
                                   int64_t since_nano = 0) override;

  /// The socket path.
  const std::string& socket_path() const {
    return path_;
  }

private:
  /// One whole answer: the status, the headers berth reads, the body, who answered.
  struct reply {
    unsigned status = 0;
    std::string api_version;
    std::string server;
    std::string body;
    engine_instance instance;
  };
  caf::expected<reply> get(const std::string& target);

  std::string path_;
  options opts_;
};

} // namespace berth::docker_engine
