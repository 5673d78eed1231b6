// kube_client's calls over one bounded HTTPS session each. Over 400 lines because the
// session (resolve, connect, TLS, each step under the deadline) and the errors it names are
// this file's own, shared by GET, LIST and WATCH; the watch, its largest part, would
// otherwise need that transport in a header of its own.

#include "protocols/kube/kube_client.hpp"

#include <algorithm>
#include <cstdlib>
#include <optional>

#include <boost/asio/connect.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http.hpp>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>

#include "core/errors.hpp"
#include "core/limits.hpp"
#include "protocols/http/body_lines.hpp"
#include "protocols/http/bounded_step.hpp"
#include "protocols/kube/detail/text.hpp"
#include "protocols/kube/kube_json.hpp"

namespace berth::kube {

namespace asio = boost::asio;
namespace ssl = boost::asio::ssl;
namespace http = boost::beast::http;
using tcp = asio::ip::tcp;
using boost::system::error_code;
using clock_type = std::chrono::steady_clock;

namespace {

// -- one connection, every step bounded by the call's deadline -----------------------

/// A connection for one call. `step` runs one asynchronous operation to completion or
/// until the deadline; past it the socket is closed and the step reports `timed_out`.
struct session {
  session(ssl::context& tls, const kube_config& cfg, clock_type::time_point until)
    : stream(io, tls), resolver(io), cfg(cfg), until(until) {
  }

  asio::io_context io;
  ssl::stream<tcp::socket> stream;
  tcp::resolver resolver;
  boost::beast::flat_buffer buffer;
  const kube_config& cfg;
  clock_type::time_point until;
  bool timed_out = false;

  template <class Start>
  error_code step(Start start) {
    return run_bounded(io, until, start, [this] {
      timed_out = true;
      error_code ignored;
      resolver.cancel();
      stream.lowest_layer().close(ignored);
    });
  }
};

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

/// Writes a GET of `target` with the bearer token (if any).
caf::error send_get(session& s, const std::string& target, const std::string& token,
                    const std::string& what) {
  http::request<http::empty_body> req{http::verb::get, s.cfg.base_path + target, 11};
  // Host names the authority as the URL does: [v6]:port, host:port.
  auto host = s.cfg.host.find(':') != std::string::npos ? "[" + s.cfg.host + "]" : s.cfg.host;
  req.set(http::field::host, host + ":" + s.cfg.port);
  req.set(http::field::user_agent, "berth/" BERTH_VERSION);
  req.set(http::field::accept, "application/json");
  if (!token.empty()) {
    req.set(http::field::authorization, "Bearer " + token);
  }
  req.keep_alive(false);
  auto err = s.step([&](auto done) { http::async_write(s.stream, req, done); });
  if (err) {
    if (s.timed_out) {
      return make_error(ec::timeout,
                        "kube API " + s.cfg.server + ": " + what + ": no answer before the deadline (write)");
    }
    return make_error(ec::unavailable, "kube API " + s.cfg.server + ": " + what + ": write: " + err.message());
  }
  return caf::none;
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

} // namespace

// -- kube_client -------------------------------------------------------------------------

caf::expected<std::unique_ptr<kube_client>> kube_client::make(kube_config cfg,
                                                              watch_bounds bounds) {
  auto tls = std::make_unique<ssl::context>(ssl::context::tls_client);
  error_code err;
  tls->set_options(ssl::context::default_workarounds | ssl::context::no_sslv2 |
                     ssl::context::no_sslv3 | ssl::context::no_tlsv1 | ssl::context::no_tlsv1_1,
                   err);
  if (cfg.ca_pem.empty()) {
    tls->set_default_verify_paths(err);
  } else {
    tls->add_certificate_authority(asio::buffer(cfg.ca_pem), err);
  }
  if (err) {
    return make_error(ec::invalid_argument,
                      cfg.origin + ": the certificate authority does not load: " + err.message());
  }
  if (!cfg.client_cert_pem.empty()) {
    tls->use_certificate_chain(asio::buffer(cfg.client_cert_pem), err);
    if (err) {
      return make_error(ec::invalid_argument,
                        cfg.origin + ": the client certificate does not load: " + err.message());
    }
    tls->use_private_key(asio::buffer(cfg.client_key_pem), ssl::context::pem, err);
    if (err) {
      return make_error(ec::invalid_argument,
                        cfg.origin + ": the client key does not load: " + err.message());
    }
  }
  tls->set_verify_mode(ssl::verify_peer);
  return std::unique_ptr<kube_client>{new kube_client(std::move(cfg), bounds, std::move(tls))};
}

kube_client::kube_client(kube_config cfg, watch_bounds bounds, std::unique_ptr<ssl::context> tls)
  : cfg_(std::move(cfg)), bounds_(bounds), tls_(std::move(tls)) {
}

kube_client::~kube_client() = default;

caf::expected<kube_client::reply> kube_client::get(const std::string& target,
                                                   clock_type::time_point until) {
  auto what = "GET " + target;
  auto token = token_for(cfg_);
  if (!token) {
    return token.error();
  }
  session s{*tls_, cfg_, until};
  if (auto err = open(s, what)) {
    return err;
  }
  if (auto err = send_get(s, target, *token, what)) {
    return err;
  }
  http::response_parser<http::string_body> parser;
  parser.body_limit(limits::max_kube_response_bytes);
  auto err = s.step([&](auto done) { http::async_read(s.stream, s.buffer, parser, done); });
  if (err) {
    if (s.timed_out) {
      return make_error(ec::timeout, "kube API " + cfg_.server + ": " + what +
                                       ": no answer before the deadline (read)");
    }
    return make_error(ec::unavailable,
                      "kube API " + cfg_.server + ": " + what + ": read: " + err.message());
  }
  auto res = parser.release();
  reply out{res.result_int(), std::move(res.body())};
  if (out.status / 100 != 2) {
    return status_error(cfg_, what, out.status, out.body, *token);
  }
  return out;
}

caf::expected<node_info> kube_client::get_node(const std::string& name,
                                               clock_type::time_point until) {
  auto res = get("/api/v1/nodes/" + detail::url_encode(name), until);
  if (!res) {
    if (res.error() == ec::not_found) {
      return node_info{};
    }
    return res.error();
  }
  return parse_node(res->body);
}

caf::expected<attachment_page> kube_client::list_attachments(const std::string& next,
                                                             size_t limit,
                                                             clock_type::time_point until) {
  auto target = "/apis/storage.k8s.io/v1/volumeattachments?limit=" + std::to_string(limit);
  if (!next.empty()) {
    target += "&continue=" + detail::url_encode(next);
  }
  auto res = get(target, until);
  if (!res) {
    return res.error();
  }
  return parse_attachment_list(res->body);
}

caf::expected<watch_end>
kube_client::watch_attachments(const std::string& resource_version,
                               const std::function<bool(const attachment_event&)>& on_event,
                               clock_type::time_point until) {
  auto now = clock_type::now();
  if (now >= until) {
    return watch_end::stopped;
  }
  // Ask the server to end the watch by our deadline, so it holds nothing for a gone client,
  // and within the window, so a connection that died silently is noticed: a watch the server
  // has not ended `grace` after its timeoutSeconds is not heard from any more.
  auto left = std::min<long long>(
    std::chrono::duration_cast<std::chrono::seconds>(until - now).count() + 1,
    bounds_.window.count());
  auto presumed_dead = now + std::chrono::seconds{left} + bounds_.grace;
  std::string target = "/apis/storage.k8s.io/v1/volumeattachments?watch=1";
  if (!resource_version.empty()) {
    target += "&resourceVersion=" + detail::url_encode(resource_version);
  }
  target += "&allowWatchBookmarks=true&timeoutSeconds=" + std::to_string(left);
  auto what = "WATCH volumeattachments from resourceVersion " +
              (resource_version.empty() ? std::string{"(now)"} : resource_version);
  auto token = token_for(cfg_);
  if (!token) {
    return token.error();
  }
  session s{*tls_, cfg_, std::min(until, presumed_dead)};
  if (auto err = open(s, what)) {
    return err;
  }
  if (auto err = send_get(s, target, *token, what)) {
    return err;
  }
  http::response_parser<http::buffer_body> parser;
  parser.body_limit(boost::none); // an endless stream: each line is bounded below instead
  auto err = s.step([&](auto done) { http::async_read_header(s.stream, s.buffer, parser, done); });
  if (err) {
    if (s.timed_out) {
      return make_error(ec::timeout, "kube API " + cfg_.server + ": " + what +
                                       ": no answer before the deadline (read)");
    }
    return make_error(ec::unavailable,
                      "kube API " + cfg_.server + ": " + what + ": read: " + err.message());
  }
  unsigned status = parser.get().result_int();

  body_lines lines{parser, [&] {
    return s.step([&](auto done) { http::async_read_some(s.stream, s.buffer, parser, done); });
  }};

  if (status != 200) {
    lines.read_up_to(limits::max_kube_response_bytes);
    if (s.timed_out) {
      return make_error(ec::timeout, "kube API " + cfg_.server + ": " + what +
                                       ": no answer before the deadline (read)");
    }
    if (status == 410) {
      return watch_end::gone;
    }
    return status_error(cfg_, what, status, lines.pending(), *token);
  }

  // Handles one line; nullopt: go on.
  auto handle = [&](const std::string& line) -> std::optional<caf::expected<watch_end>> {
    if (detail::trim(line).empty()) {
      return std::nullopt;
    }
    auto ev = parse_watch_line(line);
    if (!ev) {
      return caf::expected<watch_end>{ev.error()};
    }
    const auto& type = ev->event.type;
    if (type == "ERROR") {
      if (ev->status.code == 410) {
        return caf::expected<watch_end>{watch_end::gone};
      }
      return caf::expected<watch_end>{make_error(
        ec::unavailable, "kube API " + cfg_.server + ": " + what + ": ERROR event " +
                           std::to_string(ev->status.code) + " " + ev->status.reason + ": " +
                           detail::redact(ev->status.message, *token))};
    }
    if (type != "ADDED" && type != "MODIFIED" && type != "DELETED" && type != "BOOKMARK") {
      return std::nullopt; // a type this client does not know: skip it
    }
    if (!on_event(ev->event)) {
      return caf::expected<watch_end>{watch_end::stopped};
    }
    return std::nullopt;
  };

  for (;;) {
    bool more = lines.read_more();
    while (auto line = lines.next_line()) {
      if (auto end = handle(*line)) {
        return std::move(*end);
      }
    }
    if (lines.pending().size() > limits::max_kube_watch_line_bytes) {
      return make_error(ec::unavailable, "kube API " + cfg_.server + ": " + what +
                                           ": a watch event longer than " +
                                           std::to_string(limits::max_kube_watch_line_bytes) +
                                           " bytes");
    }
    if (!more) {
      break;
    }
  }
  if (s.timed_out) {
    if (clock_type::now() >= until) {
      return watch_end::stopped;
    }
    return make_error(ec::timeout, "kube API " + cfg_.server + ": " + what + ": the server neither " +
                                     "ended the watch at its timeoutSeconds=" + std::to_string(left) +
                                     " nor sent anything for " +
                                     std::to_string(bounds_.grace.count()) +
                                     " s more; the connection is presumed dead");
  }
  // The stream ended (cleanly, or the connection dropped): a last line without its newline counts.
  if (auto end = handle(lines.pending())) {
    return std::move(*end);
  }
  return watch_end::closed;
}

} // namespace berth::kube
