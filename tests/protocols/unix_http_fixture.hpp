#pragma once

// The fixture of the unix HTTP server's tests: a socket path in a fresh directory, and an
// io_context on two threads to serve it.

#include <string>

#include <gtest/gtest.h>

#include "tests/protocols/test_util.hpp"

namespace berth::test {

class unix_http_server_test : public ::testing::Test {
protected:
  test::temp_dir dir;
  test::io_threads io;
  std::string path = dir.path + "/sub/dir/test.sock";
};

} // namespace berth::test
