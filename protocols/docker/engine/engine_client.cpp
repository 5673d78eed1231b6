#include "protocols/docker/engine/engine_client.hpp"

#include <cerrno>
#include <cstdio>

#include <boost/asio/io_context.hpp>
#include <boost/asio/local/stream_protocol.hpp>
#include <boost/asio/post.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http.hpp>

#include "core/errors.hpp"
#include "protocols/docker/engine/engine_json.hpp"
#include "protocols/http/body_lines.hpp"
#include "protocols/http/bounded_step.hpp"

namespace berth::docker_engine {

namespace asio = boost::asio;
namespace http = boost::beast::http;
using local = asio::local::stream_protocol;
using boost::system::error_code;
using clock_type = std::chrono::steady_clock;

namespace {

// -- one connection, every step bounded ------------------------------------------------

/// A connection for one call. `step` runs one asynchronous operation to completion or until
/// `until`; past it the socket is closed and the step reports `timed_out`.
struct session {
  explicit session(clock_type::time_point until) : until(until) {
  }

  asio::io_context io;
  local::socket socket{io};
  boost::beast::flat_buffer buffer;
  clock_type::time_point until;
  bool timed_out = false;

  template <class Start>
  error_code step(Start start) {
    return run_bounded(io, until, start, [this] {
      timed_out = true;
      error_code ignored;
      socket.close(ignored);
    });
  }
};

/// Names the call and the socket in every error.
struct call_errors {
  std::string head; ///< "Docker API unix:///PATH: GET /v1.41/info"
  long timeout_ms;

  caf::error transport(const session& s, const char* step, const error_code& err) const {
    if (s.timed_out) {
      return make_error(ec::timeout, head + ": no answer within " + std::to_string(timeout_ms) +
                                       " ms (" + step + "); dockerd is hung or overloaded");
    }
    auto text = head + ": " + step + ": " + err.message();
    if (std::string{step} == "connect") {
      if (err == asio::error::not_found || err.value() == ENOENT) {
        text += " (no socket there: is dockerd running, and is this its socket?)";
      } else if (err == asio::error::connection_refused) {
        text += " (nothing accepts on the socket: dockerd is not running or is starting)";
      } else if (err == asio::error::access_denied) {
        text += " (berthd needs read and write access to the socket)";
      }
    }
    return make_error(ec::unavailable, text);
  }

  caf::error status(unsigned code, const std::string& body) const {
    auto msg = parse_error_message(body);
    auto text = head + ": HTTP " + std::to_string(code) + " " +
                std::string{http::obsolete_reason(static_cast<http::status>(code))};
    if (!msg.empty()) {
      text += ": " + msg;
    }
    if (code >= 500) {
      return make_error(ec::unavailable, text);
    }
    return make_error(ec::failed_precondition,
                      text + " (this client speaks API " + api_version + ", dockerd 20.10 or later)");
  }
};

/// Connects and writes GET target. (Who answers is read once the answer came: before
/// that, the connection may still wait in the listen queue, accepted by no process.)
caf::error open_and_send(session& s, const std::string& path, const std::string& target,
                         const call_errors& errs) {
  auto err = s.step([&](auto done) { s.socket.async_connect(local::endpoint{path}, done); });
  if (err) {
    return errs.transport(s, "connect", err);
  }
  http::request<http::empty_body> req{http::verb::get, target, 11};
  req.set(http::field::host, "docker");
  req.set(http::field::user_agent, "berth/" BERTH_VERSION);
  // Kept alive (and closed by us once read) so dockerd still holds its end when the client
  // looks for the process that does (peer_instance under socket activation).
  req.keep_alive(true);
  err = s.step([&](auto done) { http::async_write(s.socket, req, done); });
  if (err) {
    return errs.transport(s, "write", err);
  }
  return caf::none;
}

std::string events_target(int64_t since_nano) {
  // filters={"type":["container"]}
  std::string target = std::string{"/v"} + api_version +
                       "/events?filters=%7B%22type%22%3A%5B%22container%22%5D%7D";
  if (since_nano > 0) {
    char since[48];
    std::snprintf(since, sizeof since, "%lld.%09lld",
                  static_cast<long long>(since_nano / 1000000000),
                  static_cast<long long>(since_nano % 1000000000));
    target += std::string{"&since="} + since;
  }
  return target;
}

} // namespace

// -- engine_client ------------------------------------------------------------------------

engine_client::engine_client(std::string socket_path, options opts)
  : path_(std::move(socket_path)), opts_(opts) {
}

std::string engine_client::describe() const {
  return "unix://" + path_;
}

caf::expected<engine_client::reply> engine_client::get(const std::string& target) {
  call_errors errs{"Docker API " + describe() + ": GET " + target,
                   static_cast<long>(opts_.call_timeout.count())};
  session s{clock_type::now() + opts_.call_timeout};
  reply out;
  if (auto err = open_and_send(s, path_, target, errs)) {
    return err;
  }
  http::response_parser<http::string_body> parser;
  parser.body_limit(limits::max_docker_response_bytes);
  auto err = s.step([&](auto done) { http::async_read(s.socket, s.buffer, parser, done); });
  if (err) {
    return errs.transport(s, "read", err);
  }
  out.instance = peer_instance(s.socket.native_handle());
  auto res = parser.release();
  out.status = res.result_int();
  out.api_version = std::string{res["Api-Version"]};
  out.server = std::string{res[http::field::server]};
  out.body = std::move(res.body());
  if (out.status / 100 != 2) {
    return errs.status(out.status, out.body);
  }
  return out;
}

caf::expected<ping_reply> engine_client::ping() {
  auto res = get("/_ping");
  if (!res) {
    return res.error();
  }
  return ping_reply{res->api_version, res->server, res->instance};
}

caf::expected<engine_info> engine_client::info() {
  auto res = get(std::string{"/v"} + api_version + "/info");
  if (!res) {
    return res.error();
  }
  auto info = parse_info(res->body);
  if (!info) {
    return info.error();
  }
  info->instance = res->instance;
  return info;
}

caf::expected<container_list> engine_client::containers() {
  auto res = get(std::string{"/v"} + api_version + "/containers/json?all=1");
  if (!res) {
    return res.error();
  }
  auto list = parse_containers(res->body);
  if (!list) {
    return list.error();
  }
  list->instance = res->instance;
  return list;
}

caf::expected<events_end> engine_client::events(const event_handler& handler, stop_signal& stop,
                                                int64_t since_nano) {
  auto target = events_target(since_nano);
  call_errors errs{"Docker API " + describe() + ": GET " + target,
                   static_cast<long>(opts_.call_timeout.count())};
  if (stop.stop_requested()) {
    return events_end::stopped;
  }
  session s{clock_type::now() + opts_.call_timeout};
  // A stop from another thread closes the socket on the session's own thread; every
  // blocked step then fails at once.
  stop.set_waker([&s] {
    asio::post(s.io, [&s] {
      error_code ignored;
      s.socket.close(ignored);
    });
  });
  struct unset {
    stop_signal& stop;
    ~unset() {
      stop.clear_waker();
    }
  } unset_waker{stop};

  if (auto err = open_and_send(s, path_, target, errs)) {
    if (stop.stop_requested()) {
      return events_end::stopped;
    }
    return err;
  }
  http::response_parser<http::buffer_body> parser;
  parser.body_limit(boost::none); // an endless stream: each line is bounded below instead
  auto err = s.step([&](auto done) { http::async_read_header(s.socket, s.buffer, parser, done); });
  if (err) {
    if (stop.stop_requested()) {
      return events_end::stopped;
    }
    return errs.transport(s, "read", err);
  }
  unsigned status = parser.get().result_int();
  auto who = peer_instance(s.socket.native_handle());

  body_lines lines{parser, [&] {
    return s.step([&](auto done) { http::async_read_some(s.socket, s.buffer, parser, done); });
  }};

  if (status != 200) {
    lines.read_up_to(limits::max_docker_response_bytes);
    if (stop.stop_requested()) {
      return events_end::stopped;
    }
    if (s.timed_out) {
      return errs.transport(s, "read", asio::error::timed_out);
    }
    return errs.status(status, lines.pending());
  }

  if (handler.on_open) {
    handler.on_open(who);
  }
  for (;;) {
    // dockerd sends nothing while nothing happens: only a silence past the idle bound ends
    // the stream, so that opening it again shows whether dockerd still answers.
    s.until = clock_type::now() + opts_.events_idle;
    bool more = lines.read_more();
    if (s.timed_out) {
      return stop.stop_requested() ? events_end::stopped : events_end::idle;
    }
    while (auto line = lines.next_line()) {
      if (line->find_first_not_of(" \t\r") == std::string::npos) {
        continue;
      }
      auto ev = parse_event(*line);
      if (!ev) {
        return ev.error();
      }
      if (handler.on_event) {
        handler.on_event(*ev);
      }
    }
    if (stop.stop_requested()) {
      return events_end::stopped;
    }
    if (lines.pending().size() > limits::max_docker_event_line_bytes) {
      return make_error(ec::unavailable, errs.head + ": an event longer than " +
                                           std::to_string(limits::max_docker_event_line_bytes) +
                                           " bytes");
    }
    if (!more) {
      break;
    }
  }
  return events_end::closed;
}

} // namespace berth::docker_engine
