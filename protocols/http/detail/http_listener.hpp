#pragma once

// What an HTTP server and its sessions share, for any stream protocol asio has (unix
// sockets, TCP): the acceptor, the handler, the limits and the counters. The session
// (one connection) and accept loop are written once, in http_listener.cpp, and
// instantiated there for both protocols; the servers add only how they bind.

#include <atomic>
#include <memory>
#include <mutex>
#include <string>

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/local/stream_protocol.hpp>
#include <boost/asio/steady_timer.hpp>

#include "protocols/http/http_handler.hpp"

namespace berth::detail {

/// Shared by a server and its sessions; outlives the server object while sessions
/// still run.
template <class Protocol>
struct http_listener : std::enable_shared_from_this<http_listener<Protocol>> {
  http_listener(boost::asio::io_context& ctx, handler_fn fn, http_server_limits lim,
                std::string label)
    : io(ctx), handler(std::move(fn)), limits(lim), body_limit(lim.body_limit),
      name(std::move(label)), acceptor(ctx), retry(ctx) {
  }

  boost::asio::io_context& io;
  const handler_fn handler;
  const http_server_limits limits;
  const size_t body_limit;
  const std::string name; ///< in log lines: "docker", "admin", "metrics"
  /// Set before the first accept (take_streams), read by sessions after: requests it
  /// names are handed to `take` once their header is read. Empty: none.
  stream_route_fn stream_route;
  stream_take_fn stream_take;
  std::atomic<bool> stopped{false};
  std::atomic<size_t> in_flight{0};
  std::atomic<size_t> connections{0};

  std::mutex mtx; ///< guards everything below
  typename Protocol::acceptor acceptor;
  boost::asio::steady_timer retry; ///< backs off after accept errors (EMFILE)
  std::string where;               ///< the socket path or HOST:PORT, for log lines
  bool bound = false;

  std::atomic<bool> paused{false}; ///< at the connection cap: no accept pending

  /// Starts one asynchronous accept, unless at the cap. Requires `mtx`.
  void accept_next();

  /// A session ended: resumes accepting if the cap had paused it.
  void session_closed();
};

extern template struct http_listener<boost::asio::local::stream_protocol>;
extern template struct http_listener<boost::asio::ip::tcp>;

} // namespace berth::detail
