#pragma once

// The transport every kube_client call shares: HTTPS connections kept alive between calls
// (a pool of idle ones, bounded), each step bounded by the call's deadline, and the errors
// that name the server, the request and the step. Private to protocols/kube.

#include <chrono>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <caf/error.hpp>
#include <caf/expected.hpp>

#include "protocols/http/bounded_step.hpp"
#include "protocols/kube/kube_config.hpp"

namespace berth::kube::detail {

/// One HTTPS connection to the API server, with the io_context that runs it (on the thread
/// of the call that holds it) and what was read of it past the last answer.
struct connection {
  explicit connection(boost::asio::ssl::context& tls) : stream(io, tls), resolver(io) {
  }

  boost::asio::io_context io;
  boost::asio::ssl::stream<boost::asio::ip::tcp::socket> stream;
  boost::asio::ip::tcp::resolver resolver;
  boost::beast::flat_buffer buffer;
  std::chrono::steady_clock::time_point idle_since;
  bool reused = false; ///< it served a call before this one
};

/// The idle connections kept for the next calls: at most limits::kube_idle_connections,
/// none idle longer than limits::kube_connection_idle, and none the server has closed.
/// Thread-safe.
class connection_pool {
public:
  /// An idle connection that still looks open (reused set), or nullptr.
  std::unique_ptr<connection> take();
  /// Keeps `c` for a later call; called only after an exchange that ended cleanly with
  /// keep-alive. Past the bound, the connection is closed instead.
  void give_back(std::unique_ptr<connection> c);
  /// Closes every idle connection (the client is stopping).
  void clear();
  /// How many are idle now.
  size_t idle();

private:
  std::mutex mu_;
  std::vector<std::unique_ptr<connection>> idle_; ///< the most recently used last
};

/// A connection to give back to `pool` when this goes out of scope (none while `conn` is
/// empty).
struct returned_connection {
  explicit returned_connection(connection_pool& pool) : pool(pool) {
  }
  ~returned_connection() {
    if (conn) {
      pool.give_back(std::move(conn));
    }
  }
  returned_connection(const returned_connection&) = delete;
  returned_connection& operator=(const returned_connection&) = delete;

  connection_pool& pool;
  std::unique_ptr<connection> conn;
};

/// A call's hold on a connection. `step` runs one asynchronous operation to completion or
/// until the deadline; past it the socket is closed and the step reports `timed_out`.
struct session {
  session(const kube_config& cfg, std::chrono::steady_clock::time_point until,
          std::unique_ptr<connection> held)
    : conn(std::move(held)), io(conn->io), stream(conn->stream), resolver(conn->resolver),
      buffer(conn->buffer), cfg(cfg), until(until) {
  }

  std::unique_ptr<connection> conn;
  boost::asio::io_context& io;
  boost::asio::ssl::stream<boost::asio::ip::tcp::socket>& stream;
  boost::asio::ip::tcp::resolver& resolver;
  boost::beast::flat_buffer& buffer;
  const kube_config& cfg;
  std::chrono::steady_clock::time_point until;
  bool timed_out = false;

  template <class Start>
  boost::system::error_code step(Start start) {
    return run_bounded(io, until, start, [this] {
      timed_out = true;
      boost::system::error_code ignored;
      resolver.cancel();
      stream.lowest_layer().close(ignored);
    });
  }
};

/// One request: its verb, target (below the config's base path), and a body with its
/// content type ("" for none).
struct request_line {
  std::string verb; ///< GET, POST, PATCH, DELETE
  std::string target;
  std::string body;
  std::string content_type;
};

/// Resolve, connect and handshake. Errors name the server, `what` and the step.
caf::error open(session& s, const std::string& what);

/// Writes `req` with the bearer token (if any), asking to keep the connection alive.
caf::error send(session& s, const request_line& req, const std::string& token,
                const std::string& what);

/// The error of a failed read or write step: ec::timeout when the deadline passed.
caf::error step_error(const session& s, const std::string& what, const char* step,
                      const boost::system::error_code& err);

/// The error for a non-2xx answer; the token never appears in it. 401/403:
/// failed_precondition naming the credentials; 404: not_found; 409 AlreadyExists:
/// already_exists; 409 Conflict: aborted (read again and retry); 410: aborted; 429 and
/// 5xx: unavailable; the rest invalid_argument.
caf::error status_error(const kube_config& cfg, const std::string& what, unsigned status,
                        const std::string& body, const std::string& token);

/// The token to send now (read per request, so a rotated one is picked up).
caf::expected<std::string> token_for(const kube_config& cfg);

} // namespace berth::kube::detail
