#pragma once

// What every berth HTTP server (unix_http_server, tcp_http_server) hands its handler,
// and what it allows a client.

#include <chrono>
#include <cstddef>
#include <functional>
#include <string>

#include "core/caller.hpp"
#include "core/limits.hpp"

namespace berth {

/// Delivers a response. Callable from any thread; only the first call counts.
/// A reply_fn destroyed without being called answers 500, so a lost reply
/// never leaves a client hanging.
using reply_fn = std::function<void(unsigned status, std::string content_type, std::string body)>;

/// Handles one request; must call `reply` exactly once, now or later. `from` is the
/// client: gone once it closes the connection before its answer, or the answer
/// cannot be written; answered once the answer was written. On a unix socket
/// `from.peer()` names the client's process (SO_PEERCRED, /proc/PID/stat), read once
/// per connection; null on TCP.
using handler_fn = std::function<void(const std::string& method, const std::string& target,
                                      std::string body, reply_fn reply, const caller& from)>;

/// What one server allows a client (defaults from core/limits.hpp).
struct http_server_limits {
  size_t body_limit = 1 << 20; ///< a larger request body is answered 413
  /// A request must arrive whole within this time of its first byte, else the
  /// connection is closed (logged).
  std::chrono::milliseconds request_deadline = limits::http_request_deadline;
  /// An open connection without a request for this long is closed.
  std::chrono::milliseconds idle_timeout = limits::http_idle_timeout;
  /// Connections served at once; at the cap accepting pauses (logged), so new
  /// connections wait in the listen backlog until one closes.
  size_t max_connections = limits::max_http_connections;
};

} // namespace berth
