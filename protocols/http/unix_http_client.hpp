#pragma once

#include <chrono>
#include <functional>
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

  /// As post, but reads the answer's body into `buffer`'s storage (cleared first): a
  /// caller that hands back the last answer's body gets the next one, when no larger,
  /// without an allocation (and without the page faults of a fresh large block).
  caf::expected<http_response> post_reusing(
    const std::string& target, const std::string& body, std::string&& buffer,
    const std::string& content_type = "application/vnd.docker.plugins.v1+json");

  /// GETs `target`.
  caf::expected<http_response> get(const std::string& target);

  /// DELETEs `target`.
  caf::expected<http_response> remove(const std::string& target);

  /// Each request (connect, write, read) ends after `limit` (0: never), with
  /// ec::timeout reading "PATH did not answer in N s"; the connection is dropped.
  void set_timeout(std::chrono::milliseconds limit) {
    timeout_ = limit;
  }

  /// Asked about every 50 ms while a request waits; when it answers true the request
  /// ends at once with ec::aborted (berthctl top's q).
  void set_interrupt(std::function<bool()> interrupted) {
    interrupted_ = std::move(interrupted);
  }

  /// The errno of the last failed connect (ENOENT, ECONNREFUSED, EACCES, ...); 0 when
  /// the last request connected (or reused its connection), so a failure was later.
  int connect_errno() const noexcept {
    return connect_errno_;
  }

private:
  struct impl;
  caf::expected<http_response> send(const std::string& method, const std::string& target,
                                    const std::string& body, const std::string& content_type,
                                    std::string buffer = {});

  /// Runs the pending operations until `done`, the timeout or the interrupt; a
  /// timeout or an interrupt closes the socket and is returned.
  caf::error wait_until(const bool& done, std::chrono::steady_clock::time_point deadline);

  std::string path_;
  std::unique_ptr<impl> impl_;
  std::chrono::milliseconds timeout_{0};
  std::function<bool()> interrupted_;
  int connect_errno_ = 0;
};

} // namespace berth
