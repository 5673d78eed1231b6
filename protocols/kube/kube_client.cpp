// kube_client's calls, each over one bounded HTTPS session (detail/transport.hpp): GET of a
// Node, LIST and WATCH of VolumeAttachments, and the shared `call` and `watch_lines` the
// object verbs (kube_objects.cpp) use too.

#include "protocols/kube/kube_client.hpp"

#include <algorithm>
#include <optional>

#include <boost/asio/post.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/beast/http.hpp>
#include <spdlog/spdlog.h>

#include "core/errors.hpp"
#include "core/limits.hpp"
#include "protocols/http/body_lines.hpp"
#include "protocols/kube/detail/text.hpp"
#include "protocols/kube/detail/transport.hpp"
#include "protocols/kube/kube_json.hpp"

namespace berth::kube {

namespace asio = boost::asio;
namespace ssl = boost::asio::ssl;
namespace http = boost::beast::http;
using boost::system::error_code;
using clock_type = std::chrono::steady_clock;
using detail::session;

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
  : cfg_(std::move(cfg)), bounds_(bounds), tls_(std::move(tls)),
    pool_(std::make_unique<detail::connection_pool>()) {
}

size_t kube_client::idle_connections() const {
  return pool_->idle();
}

kube_client::~kube_client() = default;

// -- cancellation ------------------------------------------------------------------------

class kube_client::live_call {
public:
  live_call(kube_client& client, session& s) : client_(client), s_(s) {
    err_ = client_.enter(s_);
  }
  ~live_call() {
    if (!err_) {
      client_.leave(s_);
    }
  }
  live_call(const live_call&) = delete;
  live_call& operator=(const live_call&) = delete;

  /// Set when the client was cancelled before this call began.
  const caf::error& error() const {
    return err_;
  }

private:
  kube_client& client_;
  session& s_;
  caf::error err_;
};

caf::error kube_client::enter(session& s) {
  std::lock_guard lock{live_mu_};
  if (cancelled_) {
    return make_error(ec::unavailable, "kube API " + cfg_.server + ": the client is stopping");
  }
  live_.insert(&s);
  return caf::none;
}

void kube_client::leave(session& s) {
  std::lock_guard lock{live_mu_};
  live_.erase(&s);
}

void kube_client::cancel_calls() {
  pool_->clear();
  std::lock_guard lock{live_mu_};
  cancelled_ = true;
  for (auto* s : live_) {
    // Run on the call's own thread, inside its io_context: the socket is never touched
    // from two threads. The step the call waits on then fails.
    asio::post(s->io, [s] {
      error_code ignored;
      s->resolver.cancel();
      s->stream.lowest_layer().close(ignored);
    });
  }
}

caf::expected<kube_client::reply> kube_client::call(const detail::request_line& line,
                                                    clock_type::time_point until) {
  auto what = line.verb + " " + line.target;
  auto token = detail::token_for(cfg_);
  if (!token) {
    return token.error();
  }
  // A kept connection the server closed just as the request went out fails before any
  // answer. A GET is then sent once more on a new connection; another verb is not, since
  // the server may have carried it out (Go's net/http makes the same choice).
  for (bool first = true;; first = false) {
    auto held = first ? pool_->take() : nullptr;
    if (!held) {
      held = std::make_unique<detail::connection>(*tls_);
    }
    // Declared before the session and its live_call: the connection goes back to the pool
    // only once cancel_calls can no longer reach it through this call.
    detail::returned_connection kept{*pool_};
    session s{cfg_, until, std::move(held)};
    bool reused = s.conn->reused;
    live_call live{*this, s};
    if (live.error()) {
      return live.error();
    }
    if (!reused) {
      if (auto err = detail::open(s, what)) {
        return err;
      }
    }
    auto again = [&] { return reused && !s.timed_out && line.verb == "GET"; };
    if (auto err = detail::send(s, line, *token, what)) {
      if (again()) {
        continue;
      }
      return err;
    }
    http::response_parser<http::string_body> parser;
    parser.body_limit(limits::max_kube_response_bytes);
    auto err = s.step([&](auto done) { http::async_read(s.stream, s.buffer, parser, done); });
    if (err) {
      if (!parser.got_some() && again()) {
        continue;
      }
      return detail::step_error(s, what, "read", err);
    }
    auto res = parser.release();
    if (res.keep_alive()) {
      kept.conn = std::move(s.conn);
    }
    std::vector<std::string> warnings;
    for (const auto& field : res) {
      if (field.name() == http::field::warning) {
        warnings.emplace_back(field.value());
      }
    }
    note_warnings(warnings, what);
    reply out{res.result_int(), std::move(res.body())};
    if (out.status / 100 != 2) {
      return detail::status_error(cfg_, what, out.status, out.body, *token);
    }
    return out;
  }
}

void kube_client::note_warnings(const std::vector<std::string>& texts, const std::string& what) {
  for (const auto& text : texts) {
    {
      std::lock_guard lock{warned_mu_};
      if (warned_.size() >= limits::kube_warnings_kept || !warned_.insert(text).second) {
        continue;
      }
    }
    spdlog::warn("kube API {}: {}: the server warns: {} (said once)", cfg_.server, what, text);
  }
}

caf::expected<kube_client::reply> kube_client::get(const std::string& target,
                                                   clock_type::time_point until) {
  return call({"GET", target, "", ""}, until);
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
  return watch_lines(
    "/apis/storage.k8s.io/v1/volumeattachments?watch=1", resource_version,
    "WATCH volumeattachments", until,
    [&](const std::string& line, const std::string& what,
        const std::string& token) -> std::optional<caf::expected<watch_end>> {
      auto ev = parse_watch_line(line);
      if (!ev) {
        return caf::expected<watch_end>{ev.error()};
      }
      return after_event(ev->event.type, ev->status, what, token, [&] { return on_event(ev->event); });
    });
}

caf::expected<watch_end> kube_client::watch_error(const api_status& status,
                                                  const std::string& what,
                                                  const std::string& token) const {
  if (status.code == 410) {
    return watch_end::gone;
  }
  return make_error(ec::unavailable, "kube API " + cfg_.server + ": " + what + ": ERROR event " +
                                       std::to_string(status.code) + " " + status.reason + ": " +
                                       detail::redact(status.message, token));
}

std::optional<caf::expected<watch_end>> kube_client::after_event(const std::string& type,
                                                                const api_status& status,
                                                                const std::string& what,
                                                                const std::string& token,
                                                                const std::function<bool()>& deliver) const {
  if (type == "ERROR") {
    return watch_error(status, what, token);
  }
  if (type != "ADDED" && type != "MODIFIED" && type != "DELETED" && type != "BOOKMARK") {
    return std::nullopt; // a type this client does not know: skip it
  }
  if (!deliver()) {
    return caf::expected<watch_end>{watch_end::stopped};
  }
  return std::nullopt;
}

caf::expected<watch_end> kube_client::watch_lines(const std::string& target_with_query,
                                                  const std::string& resource_version,
                                                  const std::string& what_prefix,
                                                  clock_type::time_point until,
                                                  const line_handler& handle_line) {
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
  std::string target = target_with_query;
  if (!resource_version.empty()) {
    target += "&resourceVersion=" + detail::url_encode(resource_version);
  }
  target += "&allowWatchBookmarks=true&timeoutSeconds=" + std::to_string(left);
  auto what = what_prefix + " from resourceVersion " +
              (resource_version.empty() ? std::string{"(now)"} : resource_version);
  auto token = detail::token_for(cfg_);
  if (!token) {
    return token.error();
  }
  session s{cfg_, std::min(until, presumed_dead), std::make_unique<detail::connection>(*tls_)};
  live_call live{*this, s};
  if (live.error()) {
    return live.error();
  }
  if (auto err = detail::open(s, what)) {
    return err;
  }
  if (auto err = detail::send(s, {"GET", target, "", ""}, *token, what)) {
    return err;
  }
  http::response_parser<http::buffer_body> parser;
  parser.body_limit(boost::none); // an endless stream: each line is bounded below instead
  auto err = s.step([&](auto done) { http::async_read_header(s.stream, s.buffer, parser, done); });
  if (err) {
    return detail::step_error(s, what, "read", err);
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
    return detail::status_error(cfg_, what, status, lines.pending(), *token);
  }

  auto handle = [&](const std::string& line) -> std::optional<caf::expected<watch_end>> {
    if (detail::trim(line).empty()) {
      return std::nullopt;
    }
    return handle_line(line, what, *token);
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
