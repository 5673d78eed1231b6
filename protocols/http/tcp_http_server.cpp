#include "protocols/http/tcp_http_server.hpp"

#include <mutex>

#include <boost/asio/ip/address.hpp>
#include <spdlog/spdlog.h>

#include "core/errors.hpp"
#include "protocols/http/detail/http_listener.hpp"

namespace berth {

namespace asio = boost::asio;
using tcp = asio::ip::tcp;
using boost::system::error_code;

caf::expected<host_port> parse_host_port(const std::string& address) {
  auto bad = [&address](const std::string& why) {
    return make_error(ec::invalid_argument, "address '" + address + "' " + why
                                              + ": give HOST:PORT, e.g. 127.0.0.1:9808, "
                                                "[::1]:9808 or 127.0.0.1:0 for any free port");
  };
  host_port out;
  std::string port;
  if (!address.empty() && address.front() == '[') {
    auto close = address.find(']');
    if (close == std::string::npos || close + 1 >= address.size() || address[close + 1] != ':') {
      return bad("has an unclosed '[' or no ':PORT' after ']'");
    }
    out.host = address.substr(1, close - 1);
    port = address.substr(close + 2);
  } else {
    auto colon = address.rfind(':');
    if (colon == std::string::npos) {
      return bad("has no ':PORT'");
    }
    out.host = address.substr(0, colon);
    if (out.host.find(':') != std::string::npos) {
      return bad("is an IPv6 address without brackets");
    }
    port = address.substr(colon + 1);
  }
  if (out.host.empty()) {
    return bad("has no host");
  }
  if (port.empty() || port.size() > 5 || port.find_first_not_of("0123456789") != std::string::npos
      || std::stoul(port) > 65535) {
    return bad("has no port from 0 to 65535");
  }
  out.port = static_cast<uint16_t>(std::stoul(port));
  return out;
}

std::string to_string(const tcp::endpoint& ep) {
  auto addr = ep.address();
  auto host = addr.to_string();
  if (addr.is_v6()) {
    host = "[" + host + "]";
  }
  return host + ":" + std::to_string(ep.port());
}

tcp_http_server::tcp_http_server(asio::io_context& io, handler_fn handler, http_server_limits lim,
                                 std::string name)
  : listener_(std::make_shared<detail::http_listener<tcp>>(io, std::move(handler), lim,
                                                           std::move(name))) {
}

tcp_http_server::~tcp_http_server() {
  stop();
}

caf::expected<std::string> tcp_http_server::listen(const std::string& address) {
  auto hp = parse_host_port(address);
  if (!hp) {
    return hp.error();
  }
  auto& l = *listener_;
  std::lock_guard<std::mutex> guard{l.mtx};
  if (l.bound) {
    return make_error(ec::invalid_argument, l.name + " server already listens on " + l.where);
  }
  error_code err;
  tcp::resolver resolver{l.io};
  auto found = resolver.resolve(hp->host, std::to_string(hp->port),
                                tcp::resolver::passive | tcp::resolver::numeric_service, err);
  if (err || found.empty()) {
    return make_error(ec::invalid_argument,
                      "cannot resolve the host of " + address + ": "
                        + (err ? err.message() : std::string{"no address"}));
  }
  std::string why;
  for (const auto& entry : found) {
    auto ep = entry.endpoint();
    error_code ignored;
    l.acceptor.close(ignored);
    if (l.acceptor.open(ep.protocol(), err); err) {
      why = "cannot open a socket for " + to_string(ep) + ": " + err.message();
      continue;
    }
    // A restart must not wait for the previous process's connections in TIME_WAIT.
    l.acceptor.set_option(asio::socket_base::reuse_address(true), ignored);
    if (l.acceptor.bind(ep, err); err) {
      why = "cannot bind " + to_string(ep) + ": " + err.message();
      continue;
    }
    if (l.acceptor.listen(asio::socket_base::max_listen_connections, err); err) {
      why = "cannot listen on " + to_string(ep) + ": " + err.message();
      continue;
    }
    auto bound = l.acceptor.local_endpoint(err);
    if (err) {
      why = "cannot read the address bound for " + to_string(ep) + ": " + err.message();
      continue;
    }
    l.where = to_string(bound);
    l.bound = true;
    l.stopped = false;
    l.accept_next();
    return l.where;
  }
  error_code ignored;
  l.acceptor.close(ignored);
  return make_error(ec::unavailable, why + " (is another process using " + address + "?)");
}

void tcp_http_server::stop() {
  auto& l = *listener_;
  std::lock_guard<std::mutex> guard{l.mtx};
  l.stopped = true;
  error_code ignored;
  l.acceptor.close(ignored);
  l.retry.cancel();
  if (!l.bound) {
    return;
  }
  l.bound = false;
  spdlog::info("{}: stopped accepting on {}", l.name, l.where);
}

size_t tcp_http_server::in_flight() const {
  return listener_->in_flight.load();
}

size_t tcp_http_server::connections() const {
  return listener_->connections.load();
}

} // namespace berth
