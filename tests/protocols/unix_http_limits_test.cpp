// The unix HTTP server's connection bounds (the slowloris defences): a request that
// arrives too slowly is cut at its deadline, an idle connection is closed, and the
// connection cap holds while a waiting client is served later.

#include "protocols/http/unix_http_server.hpp"

#include <sys/socket.h>
#include <sys/time.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>

#include <chrono>
#include <string>
#include <thread>

#include <gtest/gtest.h>

#include "core/errors.hpp"
#include "protocols/http/unix_http_client.hpp"
#include "tests/protocols/test_util.hpp"
#include "tests/protocols/unix_http_fixture.hpp"

using namespace berth;
using namespace std::chrono_literals;
using test::echo;
using test::unix_http_server_test;

namespace {

/// A raw client connection whose reads give up after `patience`.
class raw_conn {
public:
  raw_conn(const std::string& path, std::chrono::milliseconds patience) {
    fd_ = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    std::snprintf(addr.sun_path, sizeof(addr.sun_path), "%s", path.c_str());
    connected_ = ::connect(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0;
    timeval tv{};
    tv.tv_sec = patience.count() / 1000;
    tv.tv_usec = (patience.count() % 1000) * 1000;
    ::setsockopt(fd_, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
  }
  ~raw_conn() {
    close();
  }
  bool connected() const {
    return connected_;
  }
  void send(const std::string& bytes) {
    (void)!::write(fd_, bytes.data(), bytes.size());
  }
  /// Reads once: "eof" when the server closed, "timeout" when nothing came, else the bytes.
  std::string read_once() {
    char buf[4096];
    auto n = ::read(fd_, buf, sizeof(buf));
    if (n == 0) {
      return "eof";
    }
    if (n < 0) {
      return errno == EAGAIN || errno == EWOULDBLOCK ? "timeout" : "error";
    }
    return std::string(buf, static_cast<size_t>(n));
  }
  void close() {
    if (fd_ >= 0) {
      ::close(fd_);
      fd_ = -1;
    }
  }

private:
  int fd_ = -1;
  bool connected_ = false;
};

http_server_limits short_limits() {
  http_server_limits lim;
  lim.request_deadline = 300ms;
  lim.idle_timeout = 10s;
  return lim;
}

} // namespace

TEST_F(unix_http_server_test, a_client_that_sends_half_a_header_is_disconnected_at_the_deadline) {
  unix_http_server srv{io.io, echo, short_limits(), "test"};
  ASSERT_FALSE(srv.listen(path));
  raw_conn slow{path, 5s};
  ASSERT_TRUE(slow.connected());
  auto start = std::chrono::steady_clock::now();
  slow.send("POST /x HTTP/1.1\r\nHost: a\r\nContent-Le");
  EXPECT_EQ(slow.read_once(), "eof") << "the server must close a connection stuck mid-header";
  auto waited = std::chrono::steady_clock::now() - start;
  EXPECT_GE(waited, 250ms);
  EXPECT_LT(waited, 3s);
  // Others are still served.
  unix_http_client client{path};
  auto res = client.post("/y", "b");
  ASSERT_TRUE(res) << describe(res.error());
  EXPECT_EQ(res->body, "POST /y b");
}

TEST_F(unix_http_server_test, a_slow_body_is_disconnected_at_the_deadline) {
  unix_http_server srv{io.io, echo, short_limits(), "test"};
  ASSERT_FALSE(srv.listen(path));
  raw_conn slow{path, 5s};
  slow.send("POST /x HTTP/1.1\r\nHost: a\r\nContent-Length: 100\r\n\r\nonly a little");
  EXPECT_EQ(slow.read_once(), "eof");
}

TEST_F(unix_http_server_test, an_idle_connection_is_closed_after_the_idle_timeout) {
  http_server_limits lim;
  lim.idle_timeout = 300ms;
  unix_http_server srv{io.io, echo, lim, "test"};
  ASSERT_FALSE(srv.listen(path));
  raw_conn idle{path, 5s};
  ASSERT_TRUE(idle.connected());
  EXPECT_EQ(idle.read_once(), "eof") << "a connection that never sends is closed";
  // After a request, the kept-alive connection idles out too.
  raw_conn kept{path, 5s};
  kept.send("GET /a HTTP/1.1\r\nHost: a\r\n\r\n");
  auto reply = kept.read_once();
  EXPECT_NE(reply.find("200"), std::string::npos) << reply;
  EXPECT_EQ(kept.read_once(), "eof");
  // The session ends when its last handler has run, just after the close.
  for (int i = 0; i < 100 && srv.connections() > 0; ++i) {
    std::this_thread::sleep_for(10ms);
  }
  EXPECT_EQ(srv.connections(), 0u);
}

TEST_F(unix_http_server_test, the_connection_cap_holds_and_a_waiting_client_is_served_later) {
  http_server_limits lim;
  lim.max_connections = 2;
  unix_http_server srv{io.io, echo, lim, "test"};
  ASSERT_FALSE(srv.listen(path));
  raw_conn first{path, 5s};
  raw_conn second{path, 5s};
  ASSERT_TRUE(first.connected() && second.connected());
  first.send("GET /1 HTTP/1.1\r\nHost: a\r\n\r\n");
  EXPECT_NE(first.read_once().find("GET /1"), std::string::npos);
  // The third connects (the backlog takes it) but is not served while two are open.
  raw_conn third{path, 500ms};
  ASSERT_TRUE(third.connected());
  third.send("GET /3 HTTP/1.1\r\nHost: a\r\n\r\n");
  EXPECT_EQ(third.read_once(), "timeout") << "served beyond the cap";
  EXPECT_EQ(srv.connections(), 2u);
  second.close();
  std::string reply;
  for (int i = 0; i < 10 && reply.find("GET /3") == std::string::npos; ++i) {
    reply += third.read_once();
  }
  EXPECT_NE(reply.find("GET /3"), std::string::npos) << "served once a slot freed: " << reply;
  EXPECT_LE(srv.connections(), 2u);
}
