#pragma once

// The fixture of the unix HTTP server's tests: a socket path in a fresh directory, an
// io_context on two threads to serve it, and a handler that echoes the request.

#include <string>

#include <gtest/gtest.h>

#include "protocols/http/unix_http_server.hpp"

#include "tests/protocols/test_util.hpp"

namespace berth::test {

/// Replies "METHOD TARGET BODY" at once.
inline void echo(const std::string& method, const std::string& target, std::string body,
                 reply_fn reply, const caller&) {
  reply(200, "text/plain", method + " " + target + " " + body);
}

class unix_http_server_test : public ::testing::Test {
protected:
  test::temp_dir dir;
  test::io_threads io;
  std::string path = dir.path + "/sub/dir/test.sock";
};

} // namespace berth::test
