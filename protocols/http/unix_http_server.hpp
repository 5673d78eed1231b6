#pragma once

// An HTTP/1.1 server on a unix domain socket (Boost.Beast), shared by the
// Docker plugin API and the admin API. Each connection is a session on its own
// strand; a request goes to the handler, whose reply may come from any thread
// (an actor's response handler) and is written back on the session's strand.
//
//   client ─▶ acceptor ─▶ session (strand) ─▶ handler ─▶ actor ... ─▶ reply_fn
//                              ▲                                        │
//                              └──────────── post(write) ◀──────────────┘

#include <chrono>
#include <cstddef>
#include <functional>
#include <memory>
#include <string>

#include <boost/asio/io_context.hpp>
#include <caf/error.hpp>

#include "core/caller.hpp"
#include "core/limits.hpp"

namespace berth {

/// Delivers a response. Callable from any thread; only the first call counts.
/// A reply_fn destroyed without being called answers 500, so a lost reply
/// never leaves a client hanging.
using reply_fn = std::function<void(unsigned status, std::string content_type, std::string body)>;

/// Handles one request; must call `reply` exactly once, now or later. `from` is the
/// client: gone once it closes the connection before its answer, or the answer
/// cannot be written; answered once the answer was written.
using handler_fn = std::function<void(const std::string& method, const std::string& target,
                                      std::string body, reply_fn reply, const caller& from)>;

namespace detail {
struct http_listener;
} // namespace detail

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

/// Serves HTTP/1.1 (keep-alive, many concurrent connections) on a unix socket.
/// Runs on the caller's io_context, which must outlive every pending reply.
class unix_http_server {
public:
  /// @param body_limit requests with a larger body are answered 413.
  /// @param name used in log lines ("docker", "admin").
  unix_http_server(boost::asio::io_context& io, handler_fn handler, size_t body_limit = 1 << 20,
                   std::string name = "http");

  /// @param lim the body limit, deadlines and connection cap.
  unix_http_server(boost::asio::io_context& io, handler_fn handler, http_server_limits lim,
                   std::string name);

  /// Stops accepting (see stop()).
  ~unix_http_server();

  unix_http_server(const unix_http_server&) = delete;
  unix_http_server& operator=(const unix_http_server&) = delete;

  /// Binds `path` (creating parent directories), mode 0660, owner root:root
  /// when running as root, and starts accepting. A socket file left by a crash
  /// is replaced; one that still answers is an error that says so.
  caf::error listen(const std::string& path);

  /// Closes the acceptor and removes the socket file: no new connections.
  /// Requests in flight still get their reply; idle keep-alive connections are
  /// closed after their next response. Thread-safe, idempotent.
  void stop();

  /// Requests handed to the handler whose response is not yet written.
  size_t in_flight() const;

  /// Connections open now (at most the cap).
  size_t connections() const;

private:
  std::shared_ptr<detail::http_listener> listener_;
};

} // namespace berth
