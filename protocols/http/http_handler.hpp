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

/// A request whose body or answer is a stream, too long to hold in memory (a volume's
/// export or import): once its header is read, the session hands the connection over.
struct stream_request {
  std::string method;
  std::string target;
  /// The header as read and everything read after it (the body's start): a parser fed
  /// this, then the connection, reads the request whole.
  std::string head;
  int fd = -1; ///< the connection, in blocking mode; the taker owns and closes it
};

/// Whether the request with this method and target is a stream (asked once its header
/// is read; it must not block).
using stream_route_fn = std::function<bool(const std::string& method, const std::string& target)>;

/// Takes a stream request; must not block (it runs on the session's strand): it serves
/// the connection on a thread of its own.
using stream_take_fn = std::function<void(stream_request)>;

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
