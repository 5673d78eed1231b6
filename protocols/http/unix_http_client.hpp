#pragma once

#include <memory>
#include <string>

#include <caf/expected.hpp>

namespace berth {

/// One HTTP response as the client sees it.
struct http_response {
  unsigned status = 0;
  std::string body;
};

/// A small synchronous HTTP/1.1 client on a unix socket, for berthctl and the
/// benchmark. Keeps its connection alive and reconnects once when the server
/// closed it meanwhile. Not thread-safe: one client per thread.
class unix_http_client {
public:
  explicit unix_http_client(std::string socket_path);
  ~unix_http_client();

  unix_http_client(const unix_http_client&) = delete;
  unix_http_client& operator=(const unix_http_client&) = delete;

  /// POSTs `body`. Errors (ec::unavailable) read "PATH: connect: reason".
  caf::expected<http_response>
  post(const std::string& target, const std::string& body,
       const std::string& content_type = "application/vnd.docker.plugins.v1+json");

  /// GETs `target`.
  caf::expected<http_response> get(const std::string& target);

  /// The errno of the last failed connect (ENOENT, ECONNREFUSED, EACCES, ...); 0 when
  /// the last request connected (or reused its connection), so a failure was later.
  int connect_errno() const noexcept {
    return connect_errno_;
  }

private:
  struct impl;
  caf::expected<http_response> send(const std::string& method, const std::string& target,
                                    const std::string& body, const std::string& content_type);

  std::string path_;
  std::unique_ptr<impl> impl_;
  int connect_errno_ = 0;
};

} // namespace berth
