#pragma once

// A streamed HTTP response body (a Kubernetes watch, Docker's /events) read in chunks and
// split into lines, for the API clients on Beast (protocols/kube, protocols/docker/engine).
// The caller keeps its own session, deadline and stream type; it hands in how to read
// the next chunk.

#include <functional>
#include <optional>
#include <string>
#include <utility>

#include <boost/beast/http/buffer_body.hpp>
#include <boost/beast/http/error.hpp>
#include <boost/beast/http/parser.hpp>

namespace berth {

/// Lines of a body read through a `response_parser<buffer_body>` whose header is read.
class body_lines {
public:
  using parser_type = boost::beast::http::response_parser<boost::beast::http::buffer_body>;
  /// Reads once more into the parser (`http::async_read_some` on the caller's session).
  using read_some_fn = std::function<boost::system::error_code()>;

  body_lines(parser_type& parser, read_some_fn read_some)
    : parser_(parser), read_some_(std::move(read_some)) {
  }

  /// Reads more of the body: false at its end, or on an error (the caller's session
  /// says whether it was a timeout).
  bool read_more() {
    if (parser_.is_done()) {
      return false;
    }
    parser_.get().body().data = chunk_;
    parser_.get().body().size = sizeof chunk_;
    auto err = read_some_();
    if (err == boost::beast::http::error::need_buffer) {
      err = {};
    }
    pending_.append(chunk_, sizeof chunk_ - parser_.get().body().size);
    return !err;
  }

  /// Reads until the body ends or more than `limit` bytes are buffered: an error
  /// answer's body, for its message.
  void read_up_to(size_t limit) {
    while (pending_.size() <= limit && read_more()) {
    }
  }

  /// The next whole line (without its newline), or nullopt until one is buffered.
  std::optional<std::string> next_line() {
    auto nl = pending_.find('\n');
    if (nl == std::string::npos) {
      return std::nullopt;
    }
    auto line = pending_.substr(0, nl);
    pending_.erase(0, nl + 1);
    return line;
  }

  /// What is buffered and not yet returned as a line: an error body, or a last line
  /// without its newline.
  const std::string& pending() const {
    return pending_;
  }

private:
  parser_type& parser_;
  read_some_fn read_some_;
  std::string pending_;
  char chunk_[16384];
};

} // namespace berth
