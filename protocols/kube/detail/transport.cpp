// The HTTPS transport of kube_client (detail/transport.hpp).

#include "protocols/kube/detail/transport.hpp"

#include <cerrno>
#include <cstdlib>
#include <vector>

#include <sys/socket.h>

#include <boost/asio/connect.hpp>
#include <boost/beast/http.hpp>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>

#include "core/errors.hpp"
#include "core/limits.hpp"
#include "protocols/kube/detail/text.hpp"
#include "protocols/kube/kube_json.hpp"

namespace berth::kube::detail {

namespace asio = boost::asio;
namespace ssl = boost::asio::ssl;
namespace http = boost::beast::http;
using tcp = asio::ip::tcp;
using boost::system::error_code;

namespace {

std::string ssl_detail(session& s, const error_code& err) {
  auto text = err.message();
  if (err.category() == asio::error::get_ssl_category()) {
    long verify = SSL_get_verify_result(s.stream.native_handle());
    if (verify != X509_V_OK) {
      text += std::string{" ("} + X509_verify_cert_error_string(verify) + ")";
    }
  }
  return text;
}

/// Whether an idle connection is still open: the server sent nothing since the last answer
/// (no end of stream, no TLS alert, no stray bytes) and the socket has no error.
bool looks_open(connection& c) {
  if (SSL_pending(c.stream.native_handle()) > 0 || c.buffer.size() > 0) {
    return false;
  }
  char byte = 0;
  auto n = ::recv(c.stream.lowest_layer().native_handle(), &byte, 1, MSG_PEEK | MSG_DONTWAIT);
  return n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK);
}

} // namespace

// -- connection_pool ---------------------------------------------------------------------

std::unique_ptr<connection> connection_pool::take() {
  auto now = std::chrono::steady_clock::now();
  std::lock_guard lock{mu_};
  while (!idle_.empty()) {
    auto c = std::move(idle_.back());
    idle_.pop_back();
    if (now - c->idle_since < limits::kube_connection_idle && looks_open(*c)) {
      c->reused = true;
      return c;
    }
    // Closed by the server, or idle for long: it goes (its socket closes with it).
  }
  return nullptr;
}

void connection_pool::give_back(std::unique_ptr<connection> c) {
  c->idle_since = std::chrono::steady_clock::now();
  std::lock_guard lock{mu_};
  if (idle_.size() >= limits::kube_idle_connections) {
    idle_.erase(idle_.begin()); // the one idle longest goes
  }
  idle_.push_back(std::move(c));
}

void connection_pool::clear() {
  std::lock_guard lock{mu_};
  idle_.clear();
}

size_t connection_pool::idle() {
  std::lock_guard lock{mu_};
  return idle_.size();
}

/// Resolve, connect and handshake. Errors name the server and the step.
caf::error open(session& s, const std::string& what) {
  auto fail = [&](const char* step, const error_code& err) {
    if (s.timed_out) {
      return make_error(ec::timeout, "kube API " + s.cfg.server + ": " + what +
                                       ": no answer before the deadline (" + step + ")");
    }
    return make_error(ec::unavailable,
                      "kube API " + s.cfg.server + ": " + what + ": " + step + ": " + ssl_detail(s, err));
  };
  error_code err;
  auto address = asio::ip::make_address(s.cfg.host, err);
  bool is_ip = !err;
  std::vector<tcp::endpoint> endpoints;
  if (is_ip) {
    endpoints.emplace_back(address,
                           static_cast<unsigned short>(std::strtoul(s.cfg.port.c_str(), nullptr, 10)));
  } else {
    tcp::resolver::results_type results;
    err = s.step([&](auto done) {
      s.resolver.async_resolve(s.cfg.host, s.cfg.port,
                               [&results, done](error_code e, tcp::resolver::results_type r) mutable {
                                 results = std::move(r);
                                 done(e);
                               });
    });
    if (err) {
      return fail("resolve", err);
    }
    for (const auto& r : results) {
      endpoints.push_back(r.endpoint());
    }
  }
  err = s.step([&](auto done) { asio::async_connect(s.stream.lowest_layer(), endpoints, done); });
  if (err) {
    return fail("connect", err);
  }
  SSL* ssl_handle = s.stream.native_handle();
  if (is_ip) {
    X509_VERIFY_PARAM_set1_ip_asc(SSL_get0_param(ssl_handle), s.cfg.host.c_str());
  } else {
    SSL_set_tlsext_host_name(ssl_handle, s.cfg.host.c_str());
    SSL_set1_host(ssl_handle, s.cfg.host.c_str());
  }
  s.stream.set_verify_mode(ssl::verify_peer);
  err = s.step([&](auto done) { s.stream.async_handshake(ssl::stream_base::client, done); });
  if (err) {
    return fail("TLS handshake", err);
  }
  return caf::none;
}

caf::error send(session& s, const request_line& line, const std::string& token,
                const std::string& what) {
  http::request<http::string_body> req{http::string_to_verb(line.verb),
                                       s.cfg.base_path + line.target, 11};
  // Host names the authority as the URL does: [v6]:port, host:port.
  auto host = s.cfg.host.find(':') != std::string::npos ? "[" + s.cfg.host + "]" : s.cfg.host;
  req.set(http::field::host, host + ":" + s.cfg.port);
  req.set(http::field::user_agent, "berth/" BERTH_VERSION);
  req.set(http::field::accept, "application/json");
  if (!token.empty()) {
    req.set(http::field::authorization, "Bearer " + token);
  }
  if (!line.content_type.empty()) {
    req.set(http::field::content_type, line.content_type);
    req.body() = line.body;
  }
  req.prepare_payload();
  req.keep_alive(true);
  auto err = s.step([&](auto done) { http::async_write(s.stream, req, done); });
  if (err) {
    return step_error(s, what, "write", err);
  }
  return caf::none;
}

caf::error step_error(const session& s, const std::string& what, const char* step,
                      const error_code& err) {
  if (s.timed_out) {
    return make_error(ec::timeout, "kube API " + s.cfg.server + ": " + what +
                                     ": no answer before the deadline (" + step + ")");
  }
  return make_error(ec::unavailable,
                    "kube API " + s.cfg.server + ": " + what + ": " + step + ": " + err.message());
}

/// The error for a non-2xx answer; the token never appears in it.
caf::error status_error(const kube_config& cfg, const std::string& what, unsigned status,
                        const std::string& body, const std::string& token) {
  auto st = parse_status(body);
  auto reason = std::string{http::obsolete_reason(static_cast<http::status>(status))};
  auto detail = std::to_string(status) + " " + reason;
  if (!st.message.empty()) {
    detail += ": " + st.message;
  }
  detail = detail::redact(detail, token);
  auto head = "kube API " + cfg.server + ": " + what + ": ";
  if (status == 401 || status == 403) {
    return make_error(ec::failed_precondition,
                      head + "the API refused the credentials (" + detail +
                        "); check the token or certificate of " + cfg.origin +
                        " and the RBAC rules");
  }
  if (status == 404) {
    return make_error(ec::not_found, head + detail);
  }
  if (status == 409) {
    if (st.reason == "AlreadyExists") {
      return make_error(ec::already_exists, head + detail);
    }
    return make_error(ec::aborted, head + detail + " (read the object again and retry)");
  }
  if (status == 410) {
    return make_error(ec::aborted, head + detail + " (expired: list again from the start)");
  }
  if (status == 429 || status >= 500) {
    return make_error(ec::unavailable, head + detail);
  }
  return make_error(ec::invalid_argument, head + detail);
}

caf::expected<std::string> token_for(const kube_config& cfg) {
  auto tok = current_token(cfg);
  if (!tok) {
    return make_error(ec::failed_precondition,
                      "kube API " + cfg.server + ": cannot read the credentials of " + cfg.origin +
                        ": " + describe(tok.error()));
  }
  return tok;
}

} // namespace berth::kube::detail
