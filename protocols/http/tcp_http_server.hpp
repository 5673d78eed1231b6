#pragma once

// An HTTP/1.1 server on TCP (Boost.Beast) for the metrics endpoint: the sessions,
// limits and reply rules of unix_http_server (detail/http_listener.hpp), bound to
// HOST:PORT instead of a socket file.

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <caf/expected.hpp>

#include "protocols/http/http_handler.hpp"

namespace berth {

namespace detail {
template <class Protocol>
struct http_listener;
} // namespace detail

/// A TCP address as given on the command line: "127.0.0.1:9808", "[::1]:9808",
/// "localhost:0" (port 0: any free port).
struct host_port {
  std::string host; ///< without the brackets of an IPv6 literal
  uint16_t port = 0;
};

/// Splits "HOST:PORT" (IPv6 literals in brackets), or says what is wrong with it.
caf::expected<host_port> parse_host_port(const std::string& address);

/// Spells an endpoint as parse_host_port reads it ("127.0.0.1:9808", "[::1]:9808").
std::string to_string(const boost::asio::ip::tcp::endpoint& ep);

/// Serves HTTP/1.1 on one TCP address. Runs on the caller's io_context, which must
/// outlive every pending reply.
class tcp_http_server {
public:
  /// @param name used in log lines ("metrics").
  tcp_http_server(boost::asio::io_context& io, handler_fn handler, http_server_limits lim,
                  std::string name);

  /// Stops accepting (see stop()).
  ~tcp_http_server();

  tcp_http_server(const tcp_http_server&) = delete;
  tcp_http_server& operator=(const tcp_http_server&) = delete;

  /// Resolves and binds `address` ("HOST:PORT"; port 0 takes any free port) and starts
  /// accepting. Returns the address bound ("127.0.0.1:40123"); an error names the
  /// address and why it cannot be used.
  caf::expected<std::string> listen(const std::string& address);

  /// Closes the acceptor: no new connections. Requests in flight still get their
  /// reply; idle keep-alive connections are closed after their next response.
  /// Thread-safe, idempotent.
  void stop();

  /// Requests handed to the handler whose response is not yet written.
  size_t in_flight() const;

  /// Connections open now (at most the cap).
  size_t connections() const;

private:
  std::shared_ptr<detail::http_listener<boost::asio::ip::tcp>> listener_;
};

} // namespace berth
