// The unix HTTP server and client: requests and replies, the socket file, a graceful
// stop; the connection deadlines and cap are in unix_http_limits_test.cpp.

#include "protocols/http/unix_http_server.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <fstream>
#include <future>
#include <mutex>
#include <thread>
#include <vector>

#include <boost/asio/local/stream_protocol.hpp>
#include <boost/asio/read.hpp>
#include <boost/asio/write.hpp>
#include <gtest/gtest.h>

#include "core/errors.hpp"
#include "protocols/http/unix_http_client.hpp"
#include "tests/protocols/test_util.hpp"
#include "tests/protocols/unix_http_fixture.hpp"

using namespace berth;
using namespace std::chrono_literals;
using local = boost::asio::local::stream_protocol;
using test::echo;
using test::unix_http_server_test;

namespace {

/// Sends raw bytes on a fresh connection and reads until the server closes.
std::string raw_exchange(const std::string& path, const std::string& bytes) {
  boost::asio::io_context ctx;
  local::socket s{ctx};
  s.connect(local::endpoint{path});
  boost::asio::write(s, boost::asio::buffer(bytes));
  std::string out;
  boost::system::error_code err;
  char buf[4096];
  for (;;) {
    auto n = s.read_some(boost::asio::buffer(buf), err);
    out.append(buf, n);
    if (err) {
      break;
    }
  }
  return out;
}

} // namespace

TEST_F(unix_http_server_test, serves_requests_with_keep_alive) {
  unix_http_server srv{io.io, echo};
  ASSERT_FALSE(srv.listen(path));
  struct stat st {};
  ASSERT_EQ(::stat(path.c_str(), &st), 0);
  EXPECT_TRUE(S_ISSOCK(st.st_mode));
  EXPECT_EQ(st.st_mode & 0777, 0660u);
  unix_http_client client{path};
  for (int i = 0; i < 5; ++i) {
    auto res = client.post("/x", "body" + std::to_string(i));
    ASSERT_TRUE(res) << describe(res.error());
    EXPECT_EQ(res->status, 200u);
    EXPECT_EQ(res->body, "POST /x body" + std::to_string(i));
  }
  auto res = client.get("/y?z=1");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->body, "GET /y?z=1 ");
}

TEST_F(unix_http_server_test, delivers_a_reply_made_later_on_another_thread) {
  std::promise<std::pair<std::string, reply_fn>> handed;
  unix_http_server srv{
    io.io,
    [&](const std::string&, const std::string&, std::string body, reply_fn reply, const caller&) {
      handed.set_value({std::move(body), std::move(reply)});
    }};
  ASSERT_FALSE(srv.listen(path));
  // Replies once the handler has handed the request over, from a thread not the server's.
  size_t seen_in_flight = 0;
  std::thread replier{[&] {
    auto got = handed.get_future();
    ASSERT_EQ(got.wait_for(10s), std::future_status::ready);
    auto [body, reply] = got.get();
    seen_in_flight = srv.in_flight();
    reply(201, "text/plain", "late " + body);
  }};
  // Connection: close, so the server closes after the write's completion, which counts the
  // reply out of in_flight first: reading to the close orders this test after it.
  auto out = raw_exchange(path,
                          "POST /late HTTP/1.1\r\nHost: x\r\nConnection: close\r\n"
                          "Content-Length: 1\r\n\r\nx");
  replier.join();
  EXPECT_EQ(out.rfind("HTTP/1.1 201 ", 0), 0u) << out;
  auto body_at = out.find("\r\n\r\n");
  ASSERT_NE(body_at, std::string::npos) << out;
  EXPECT_EQ(out.substr(body_at + 4), "late x");
  EXPECT_EQ(seen_in_flight, 1u);
  EXPECT_EQ(srv.in_flight(), 0u);
}

TEST_F(unix_http_server_test, only_the_first_reply_counts) {
  unix_http_server srv{io.io, [](const std::string&, const std::string&, std::string,
                                 reply_fn reply, const caller&) {
                         reply(200, "text/plain", "first");
                         reply(500, "text/plain", "second");
                       }};
  ASSERT_FALSE(srv.listen(path));
  unix_http_client client{path};
  for (int i = 0; i < 3; ++i) {
    auto res = client.post("/", "");
    ASSERT_TRUE(res);
    EXPECT_EQ(res->body, "first");
  }
}

TEST_F(unix_http_server_test, a_dropped_reply_or_an_exception_answers_500) {
  unix_http_server srv{io.io, [](const std::string&, const std::string& target, std::string,
                                 reply_fn, const caller&) {
                         if (target == "/throw") {
                           throw std::runtime_error("boom");
                         }
                       }};
  ASSERT_FALSE(srv.listen(path));
  unix_http_client client{path};
  auto dropped = client.post("/drop", "");
  ASSERT_TRUE(dropped);
  EXPECT_EQ(dropped->status, 500u);
  EXPECT_NE(dropped->body.find("no reply"), std::string::npos) << dropped->body;
  auto thrown = client.post("/throw", "");
  ASSERT_TRUE(thrown);
  EXPECT_EQ(thrown->status, 500u);
  EXPECT_NE(thrown->body.find("boom"), std::string::npos) << thrown->body;
}

TEST_F(unix_http_server_test, answers_413_to_an_oversized_body) {
  unix_http_server srv{io.io, echo, 1024};
  ASSERT_FALSE(srv.listen(path));
  unix_http_client client{path};
  auto res = client.post("/big", std::string(4096, 'x'));
  ASSERT_TRUE(res) << describe(res.error());
  EXPECT_EQ(res->status, 413u);
  EXPECT_EQ(res->body, R"({"Err":"request body exceeds the limit of 1024 bytes"})");
  auto fits = client.post("/small", std::string(1024, 'y'));
  ASSERT_TRUE(fits) << describe(fits.error());
  EXPECT_EQ(fits->status, 200u);
}

TEST_F(unix_http_server_test, answers_400_to_malformed_http_and_closes) {
  unix_http_server srv{io.io, echo};
  ASSERT_FALSE(srv.listen(path));
  auto out = raw_exchange(path, "this is not http\r\n\r\n");
  EXPECT_EQ(out.rfind("HTTP/1.1 400", 0), 0u) << out;
  EXPECT_NE(out.find("malformed HTTP request"), std::string::npos) << out;
  out = raw_exchange(path, "POST / HTTP/1.1\r\nContent-Length: zz\r\n\r\n");
  EXPECT_EQ(out.rfind("HTTP/1.1 400", 0), 0u) << out;
  out = raw_exchange(path, "GET / HTTP/1.1\r\nX: " + std::string(20000, 'h') + "\r\n\r\n");
  EXPECT_EQ(out.rfind("HTTP/1.1 431", 0), 0u) << out;
  // The server still serves well-formed requests.
  unix_http_client client{path};
  auto res = client.get("/ok");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 200u);
}

TEST_F(unix_http_server_test, survives_a_client_that_disconnects_mid_request) {
  unix_http_server srv{io.io, echo};
  ASSERT_FALSE(srv.listen(path));
  {
    boost::asio::io_context ctx;
    local::socket s{ctx};
    s.connect(local::endpoint{path});
    std::string partial = "POST / HTTP/1.1\r\nContent-Length: 100\r\n\r\nabc";
    boost::asio::write(s, boost::asio::buffer(partial));
  }
  unix_http_client client{path};
  auto res = client.get("/ok");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 200u);
}

TEST_F(unix_http_server_test, replaces_a_stale_socket_file) {
  {
    // A socket bound and closed without unlink: what a crash leaves behind.
    boost::asio::io_context ctx;
    std::filesystem::create_directories(std::filesystem::path{path}.parent_path());
    local::acceptor stale{ctx, local::endpoint{path}};
  }
  ASSERT_TRUE(std::filesystem::exists(path));
  unix_http_server srv{io.io, echo};
  ASSERT_FALSE(srv.listen(path));
  unix_http_client client{path};
  auto res = client.get("/");
  ASSERT_TRUE(res) << describe(res.error());
  EXPECT_EQ(res->status, 200u);
}

TEST_F(unix_http_server_test, refuses_a_socket_that_another_process_serves) {
  unix_http_server first{io.io, echo};
  ASSERT_FALSE(first.listen(path));
  unix_http_server second{io.io, echo};
  auto err = second.listen(path);
  ASSERT_TRUE(err);
  EXPECT_EQ(describe(err),
            "another process is serving " + path + " (is another berthd running?)");
  // The second server's failure and destruction leave the first one serving.
  unix_http_client client{path};
  auto res = client.get("/");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 200u);
}

TEST_F(unix_http_server_test, refuses_to_replace_a_file_that_is_not_a_socket) {
  std::filesystem::create_directories(std::filesystem::path{path}.parent_path());
  std::ofstream{path} << "data";
  unix_http_server srv{io.io, echo};
  auto err = srv.listen(path);
  ASSERT_TRUE(err);
  EXPECT_EQ(describe(err), path + " exists and is not a socket; refusing to replace it");
}

TEST_F(unix_http_server_test, refuses_a_path_too_long_for_a_socket) {
  unix_http_server srv{io.io, echo};
  auto err = srv.listen(dir.path + "/" + std::string(120, 's'));
  ASSERT_TRUE(err);
  EXPECT_NE(describe(err).find("is too long"), std::string::npos) << describe(err);
}

TEST_F(unix_http_server_test, stop_refuses_new_connections_but_answers_in_flight_requests) {
  std::promise<void> entered;
  reply_fn held;
  std::mutex mtx;
  unix_http_server srv{io.io, [&](const std::string&, const std::string&, std::string,
                                  reply_fn reply, const caller&) {
                         std::lock_guard<std::mutex> guard{mtx};
                         held = std::move(reply);
                         entered.set_value();
                       }};
  ASSERT_FALSE(srv.listen(path));
  std::thread caller{[&] {
    unix_http_client client{path};
    client.set_timeout(20s); // past the wait below: a request lost on the way cannot hang
    auto res = client.post("/slow", "");
    ASSERT_TRUE(res) << describe(res.error());
    EXPECT_EQ(res->status, 200u);
    EXPECT_EQ(res->body, "finished");
  }};
  if (entered.get_future().wait_for(10s) != std::future_status::ready) {
    caller.join(); // its client gives up at its own timeout
    FAIL() << "the request never reached the handler";
  }
  srv.stop();
  EXPECT_FALSE(std::filesystem::exists(path));
  EXPECT_EQ(srv.in_flight(), 1u);
  unix_http_client late{path};
  auto refused = late.get("/");
  ASSERT_FALSE(refused);
  EXPECT_EQ(describe(refused.error()).rfind(path + ": connect: ", 0), 0u)
    << describe(refused.error());
  {
    std::lock_guard<std::mutex> guard{mtx};
    held(200, "text/plain", "finished");
    held = nullptr;
  }
  caller.join();
  srv.stop(); // idempotent
}

TEST_F(unix_http_server_test, client_reconnects_when_the_server_closed_the_connection) {
  unix_http_client client{path};
  {
    test::io_threads first_io;
    unix_http_server first{first_io.io, echo};
    ASSERT_FALSE(first.listen(path));
    auto res = client.get("/one");
    ASSERT_TRUE(res);
    first.stop();
    first_io.stop();
  } // destroying the io_context closes the kept-alive connection
  unix_http_server second{io.io, echo};
  ASSERT_FALSE(second.listen(path));
  auto res = client.get("/two");
  ASSERT_TRUE(res) << describe(res.error());
  EXPECT_EQ(res->body, "GET /two ");
}

TEST_F(unix_http_server_test, client_errors_name_the_socket_path) {
  unix_http_client client{dir.path + "/missing.sock"};
  auto res = client.get("/");
  ASSERT_FALSE(res);
  EXPECT_EQ(describe(res.error()),
            dir.path + "/missing.sock: connect: No such file or directory");
}

TEST_F(unix_http_server_test, many_concurrent_clients_are_all_answered) {
  unix_http_server srv{io.io, [](const std::string&, const std::string& target, std::string body,
                                 reply_fn reply, const caller&) {
                         std::thread{[target, body, reply] { reply(200, "text/plain", target + body); }}
                           .detach();
                       }};
  ASSERT_FALSE(srv.listen(path));
  std::atomic<int> answered{0};
  std::vector<std::thread> clients;
  for (int t = 0; t < 16; ++t) {
    clients.emplace_back([&, t] {
      unix_http_client client{path};
      for (int i = 0; i < 200; ++i) {
        auto tag = std::to_string(t) + "-" + std::to_string(i);
        auto res = client.post("/c", tag);
        if (res && res->status == 200 && res->body == "/c" + tag) {
          ++answered;
        }
      }
    });
  }
  for (auto& c : clients) {
    c.join();
  }
  EXPECT_EQ(answered.load(), 3200);
}
