#pragma once

// An HTTP/1.1 server on a unix domain socket (Boost.Beast), shared by the
// Docker plugin API and the admin API. Each connection is a session on its own
// strand; a request goes to the handler, whose reply may come from any thread
// (an actor's response handler) and is written back on the session's strand.
// tcp_http_server is its TCP twin: the same sessions (detail/http_listener.hpp).
//
//   client ─▶ acceptor ─▶ session (strand) ─▶ handler ─▶ actor ... ─▶ reply_fn
//                              ▲                                        │
//                              └──────────── post(write) ◀──────────────┘

#include <sys/types.h>

#include <cstddef>
#include <memory>
#include <string>

#include <boost/asio/io_context.hpp>
#include <boost/asio/local/stream_protocol.hpp>
#include <caf/error.hpp>

#include "protocols/http/http_handler.hpp"

namespace berth {

namespace detail {
template <class Protocol>
struct http_listener;
} // namespace detail

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

  /// Hands the requests `route` names to `take` once their header is read, instead of
  /// reading their body under the body limit and answering through the handler: for
  /// streams (a volume's export and import). Call before listen() or adopt().
  void take_streams(stream_route_fn route, stream_take_fn take);

  /// Binds `path` (creating parent directories), mode 0660, owner root:root
  /// when running as root, and starts accepting. A socket file left by a crash
  /// is replaced; one that still answers is an error that says so.
  caf::error listen(const std::string& path);

  /// Serves on `fd`, a listening unix stream socket bound to `path` that another process
  /// made and keeps (systemd's socket activation): its mode and owner stay as that process
  /// set them, and stop() closes it without removing the file, so a client never finds the
  /// path gone while berthd restarts. Takes `fd` over, also when it refuses it.
  caf::error adopt(int fd, const std::string& path);

  /// Closes the acceptor and removes the socket file (one listen() bound): no new connections.
  /// Requests in flight still get their reply; idle keep-alive connections are
  /// closed after their next response. Thread-safe, idempotent.
  void stop();

  /// Requests handed to the handler whose response is not yet written.
  size_t in_flight() const;

  /// Connections open now (at most the cap).
  size_t connections() const;

private:
  std::shared_ptr<detail::http_listener<boost::asio::local::stream_protocol>> listener_;
  dev_t dev_ = 0; ///< the socket file bound (under the listener's mutex): stop() removes
  ino_t ino_ = 0; ///< it only while it is still this one, not a successor's
  bool owns_file_ = false; ///< listen() bound it; false for an adopted socket

};

} // namespace berth
