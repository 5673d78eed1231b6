// The unix HTTP server's hand-over of stream requests (berthctl export and import): the
// taker gets the connection after the header, with what was read of the body, and any
// body size; the other requests on the same server are answered as before.

#include "protocols/http/unix_http_server.hpp"

#include <unistd.h>

#include <atomic>
#include <chrono>
#include <mutex>
#include <thread>

#include <boost/asio/local/stream_protocol.hpp>
#include <boost/asio/read.hpp>
#include <boost/asio/write.hpp>
#include <gtest/gtest.h>

#include "protocols/http/unix_http_client.hpp"
#include "tests/protocols/unix_http_fixture.hpp"

using namespace berth;
using namespace std::chrono_literals;
using local = boost::asio::local::stream_protocol;
using test::unix_http_server_test;

namespace {

/// A server whose POST /stream requests go to a taker that echoes the body's bytes it
/// reads (after the head) back, and whose other requests answer "plain".
struct stream_echo {
  std::mutex mtx;
  stream_request taken;
  std::atomic<bool> took{false};
  std::thread worker;

  ~stream_echo() {
    if (worker.joinable()) {
      worker.join();
    }
  }

  void take(stream_request r) {
    {
      std::lock_guard<std::mutex> guard{mtx};
      taken = r;
    }
    // As a taker must: the connection is served on a thread of its own.
    worker = std::thread([r] {
      // The body's start came with the head; the rest is on the connection.
      std::string body = r.head.substr(r.head.find("\r\n\r\n") + 4);
      char buf[4096];
      ssize_t n;
      while (body.size() < 100000 && (n = ::read(r.fd, buf, sizeof buf)) > 0) {
        body.append(buf, static_cast<size_t>(n));
      }
      std::string res = "HTTP/1.1 200 OK\r\nContent-Length: " + std::to_string(body.size())
                        + "\r\nConnection: close\r\n\r\n" + body;
      ::write(r.fd, res.data(), res.size());
      ::close(r.fd);
    });
    took = true;
  }
};

} // namespace

TEST_F(unix_http_server_test, a_stream_request_is_handed_over_with_its_head_and_any_body_size) {
  stream_echo echo;
  unix_http_server srv{io.io,
                       [](const std::string&, const std::string&, std::string, reply_fn reply,
                          const caller&) { reply(200, "text/plain", "plain"); },
                       1024, "test"};
  srv.take_streams([](const std::string& method,
                      const std::string& target) { return method == "POST" && target == "/stream"; },
                   [&echo](stream_request r) { echo.take(std::move(r)); });
  ASSERT_FALSE(srv.listen(path));

  // A body of 100,000 bytes, far over the server's 1,024-byte body limit.
  const std::string body(100000, 'x');
  boost::asio::io_context ctx;
  local::socket s{ctx};
  s.connect(local::endpoint{path});
  std::string head = "POST /stream HTTP/1.1\r\nHost: x\r\nContent-Length: "
                     + std::to_string(body.size()) + "\r\n\r\n";
  boost::asio::write(s, boost::asio::buffer(head + body));
  std::string answer;
  boost::system::error_code err;
  boost::asio::read(s, boost::asio::dynamic_buffer(answer), err);
  ASSERT_TRUE(echo.took);
  {
    std::lock_guard<std::mutex> guard{echo.mtx};
    EXPECT_EQ(echo.taken.method, "POST");
    EXPECT_EQ(echo.taken.target, "/stream");
    EXPECT_EQ(echo.taken.head.rfind("POST /stream HTTP/1.1\r\n", 0), 0u) << echo.taken.head;
    auto end_of_head = echo.taken.head.find("\r\n\r\n");
    ASSERT_NE(end_of_head, std::string::npos) << "the head ends with its blank line";
    EXPECT_EQ(echo.taken.head.substr(end_of_head + 4),
              body.substr(0, echo.taken.head.size() - end_of_head - 4))
      << "what follows the head is the body's start";
  }
  EXPECT_NE(answer.find("200 OK"), std::string::npos) << answer.substr(0, 200);
  EXPECT_GT(answer.size(), 100000u) << "the taker read the whole body: its start and the rest";

  // Every other request is the handler's, body limit and all.
  unix_http_client client{path};
  auto plain = client.post("/other", "{}", "application/json");
  ASSERT_TRUE(plain);
  EXPECT_EQ(plain->status, 200u);
  EXPECT_EQ(plain->body, "plain");
  auto big = client.post("/other", std::string(2000, 'y'), "application/json");
  ASSERT_TRUE(big);
  EXPECT_EQ(big->status, 413u) << "the body limit still holds outside the streams";
  srv.stop();
}
