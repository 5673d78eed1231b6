#include "protocols/http/unix_http_client.hpp"

#include <algorithm>
#include <cerrno>
#include <cstdio>

#include <boost/asio/io_context.hpp>
#include <boost/asio/local/stream_protocol.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http.hpp>

#include "core/errors.hpp"

namespace berth {

namespace asio = boost::asio;
namespace http = boost::beast::http;
using local = asio::local::stream_protocol;
using boost::system::error_code;

struct unix_http_client::impl {
  asio::io_context io;
  local::socket socket{io};
  boost::beast::flat_buffer buffer;
};

unix_http_client::unix_http_client(std::string socket_path)
  : path_(std::move(socket_path)), impl_(std::make_unique<impl>()) {
}

unix_http_client::~unix_http_client() = default;

caf::expected<http_response> unix_http_client::post(const std::string& target,
                                                    const std::string& body,
                                                    const std::string& content_type) {
  return send("POST", target, body, content_type);
}

caf::expected<http_response> unix_http_client::post_reusing(const std::string& target,
                                                            const std::string& body,
                                                            std::string&& buffer,
                                                            const std::string& content_type) {
  return send("POST", target, body, content_type, std::move(buffer));
}

caf::expected<http_response> unix_http_client::get(const std::string& target) {
  return send("GET", target, {}, {});
}

caf::expected<http_response> unix_http_client::remove(const std::string& target) {
  return send("DELETE", target, {}, {});
}

caf::error unix_http_client::wait_until(const bool& done,
                                        std::chrono::steady_clock::time_point deadline) {
  using clock = std::chrono::steady_clock;
  constexpr auto slice = std::chrono::milliseconds(50);
  caf::error stopped;
  while (!done) {
    auto step = slice;
    if (timeout_.count() > 0) {
      auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - clock::now());
      if (left.count() <= 0) {
        char secs[32];
        std::snprintf(secs, sizeof(secs), "%g", static_cast<double>(timeout_.count()) / 1000.0);
        stopped = make_error(ec::timeout, path_ + " did not answer in " + secs
                                            + " s (is berthd stopped or wedged?)");
        break;
      }
      step = std::min(step, left);
    }
    if (interrupted_ && interrupted_()) {
      stopped = make_error(ec::aborted, path_ + ": request interrupted");
      break;
    }
    impl_->io.restart();
    impl_->io.run_for(step);
  }
  if (stopped) {
    // The pending handlers run once, with operation_aborted, before the next request.
    error_code ignored;
    impl_->socket.close(ignored);
    impl_->io.restart();
    impl_->io.run();
  }
  return stopped;
}

caf::expected<http_response> unix_http_client::send(const std::string& method,
                                                    const std::string& target,
                                                    const std::string& body,
                                                    const std::string& content_type,
                                                    std::string buffer) {
  auto failure = [this](const char* step, const error_code& err) {
    return make_error(ec::unavailable, path_ + ": " + step + ": " + err.message());
  };
  auto deadline = std::chrono::steady_clock::now() + timeout_;
  http::request<http::string_body> req{http::string_to_verb(method), target, 11};
  req.set(http::field::host, "localhost");
  req.set(http::field::user_agent, "berth");
  if (!content_type.empty()) {
    req.set(http::field::content_type, content_type);
  }
  req.body() = body;
  req.keep_alive(true);
  req.prepare_payload();
  // Every step is asynchronous, so that wait_until can end it at the deadline.
  auto run = [this, deadline](auto start) -> std::pair<error_code, caf::error> {
    bool done = false;
    error_code result;
    start([&](const error_code& err, auto&&...) {
      result = err;
      done = true;
    });
    auto stopped = wait_until(done, deadline);
    return {result, std::move(stopped)};
  };
  // A kept-alive connection the server closed meanwhile fails on first use
  // without the request having been handled: retry once on a fresh one.
  connect_errno_ = 0;
  for (int attempt = 0;; ++attempt) {
    bool reused = impl_->socket.is_open();
    if (!reused) {
      impl_->buffer.clear();
      auto [err, stopped] = run([this](auto handler) {
        impl_->socket.async_connect(local::endpoint{path_}, handler);
      });
      if (stopped) {
        return stopped;
      }
      if (err) {
        error_code ignored;
        impl_->socket.close(ignored);
        connect_errno_ = err.value() != 0 ? err.value() : EIO;
        return failure("connect", err);
      }
    }
    {
      auto [err, stopped] = run([this, &req](auto handler) {
        http::async_write(impl_->socket, req, handler);
      });
      if (stopped) {
        return stopped;
      }
      if (err) {
        error_code ignored;
        impl_->socket.close(ignored);
        if (reused && attempt == 0) {
          continue;
        }
        return failure("write", err);
      }
    }
    http::response_parser<http::string_body> parser;
    parser.body_limit(std::uint64_t{1} << 30);
    // string_body appends to the body it is given and reserves the Content-Length:
    // with the caller's storage, cleared, an answer that fits allocates nothing.
    buffer.clear();
    parser.get().body() = std::move(buffer);
    auto [err, stopped] = run([this, &parser](auto handler) {
      http::async_read(impl_->socket, impl_->buffer, parser, handler);
    });
    if (stopped) {
      return stopped;
    }
    if (err) {
      error_code ignored;
      impl_->socket.close(ignored);
      bool nothing_read = err == http::error::end_of_stream || err == asio::error::eof ||
                          err == asio::error::connection_reset;
      if (reused && attempt == 0 && nothing_read) {
        continue;
      }
      return failure("read", err);
    }
    auto res = parser.release();
    if (!res.keep_alive()) {
      error_code ignored;
      impl_->socket.close(ignored);
    }
    return http_response{res.result_int(), std::move(res.body())};
  }
}

} // namespace berth
