#pragma once

// The transport every kube_client call shares: one HTTPS connection per call, each step
// bounded by the call's deadline, and the errors that name the server, the request and
// the step. Private to protocols/kube.

#include <chrono>
#include <string>

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <caf/error.hpp>
#include <caf/expected.hpp>

#include "protocols/http/bounded_step.hpp"
#include "protocols/kube/kube_config.hpp"

namespace berth::kube::detail {

/// A connection for one call. `step` runs one asynchronous operation to completion or
/// until the deadline; past it the socket is closed and the step reports `timed_out`.
struct session {
  session(boost::asio::ssl::context& tls, const kube_config& cfg,
          std::chrono::steady_clock::time_point until)
    : stream(io, tls), resolver(io), cfg(cfg), until(until) {
  }

  boost::asio::io_context io;
  boost::asio::ssl::stream<boost::asio::ip::tcp::socket> stream;
  boost::asio::ip::tcp::resolver resolver;
  boost::beast::flat_buffer buffer;
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

/// Writes `req` with the bearer token (if any).
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
