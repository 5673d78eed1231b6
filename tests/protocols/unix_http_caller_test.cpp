// The unix HTTP server and the caller of each request: whether the client still waits for
// its answer, and which process it is (docs/design.md, "Clients that give up" and "Mount
// IDs dockerd forgot").

#include "protocols/http/unix_http_server.hpp"

#include <unistd.h>

#include <atomic>
#include <chrono>
#include <future>
#include <mutex>
#include <thread>
#include <vector>

#include <boost/asio/local/stream_protocol.hpp>
#include <boost/asio/write.hpp>
#include <gtest/gtest.h>

#include "core/caller.hpp"
#include "core/errors.hpp"
#include "core/proc_stat.hpp"
#include "protocols/http/unix_http_client.hpp"
#include "tests/protocols/unix_http_fixture.hpp"

using namespace berth;
using namespace std::chrono_literals;
using local = boost::asio::local::stream_protocol;
using test::unix_http_server_test;

// -- the caller of a request (docs/design.md, "Clients that give up") -------------------

TEST_F(unix_http_server_test, a_client_that_hangs_up_before_its_answer_is_gone) {
  std::mutex mtx;
  reply_fn held;
  caller from;
  std::promise<void> entered;
  unix_http_server srv{io.io, [&](const std::string&, const std::string&, std::string,
                                  reply_fn reply, const caller& who) {
                         std::lock_guard<std::mutex> guard{mtx};
                         held = std::move(reply);
                         from = who;
                         entered.set_value();
                       }};
  ASSERT_FALSE(srv.listen(path));
  std::promise<std::string> left;
  auto left_why = left.get_future();
  {
    boost::asio::io_context ctx;
    local::socket s{ctx};
    s.connect(local::endpoint{path});
    std::string req = "POST /VolumeDriver.Mount HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\n\r\n{}";
    boost::asio::write(s, boost::asio::buffer(req));
    ASSERT_EQ(entered.get_future().wait_for(10s), std::future_status::ready);
    std::lock_guard<std::mutex> guard{mtx};
    EXPECT_EQ(from.gone(), "") << "the client still waits";
    // Reports the leave, which can only come after this socket closes.
    from.on_gone([&left](const std::string& why) { left.set_value(why); });
  } // the client gives up: its socket closes
  ASSERT_EQ(left_why.wait_for(10s), std::future_status::ready) << "the close went unnoticed";
  auto why = left_why.get();
  EXPECT_NE(why.find("closed the connection"), std::string::npos) << why;
  {
    std::lock_guard<std::mutex> guard{mtx};
    EXPECT_EQ(from.gone(), why);
  }
  std::atomic<int> undone{0};
  from.on_gone([&](const std::string&) { ++undone; });
  EXPECT_EQ(undone, 1) << "an effect whose answer cannot arrive is undone at once";
  std::lock_guard<std::mutex> guard{mtx};
  held(200, "text/plain", "too late");
  held = nullptr;
}

TEST_F(unix_http_server_test, a_written_answer_marks_its_caller_answered) {
  std::mutex mtx;
  caller from;
  unix_http_server srv{io.io, [&](const std::string&, const std::string&, std::string,
                                  reply_fn reply, const caller& who) {
                         {
                           std::lock_guard<std::mutex> guard{mtx};
                           from = who;
                         }
                         reply(200, "text/plain", "ok");
                       }};
  ASSERT_FALSE(srv.listen(path));
  {
    unix_http_client client{path};
    auto res = client.post("/VolumeDriver.Mount", "{}");
    ASSERT_TRUE(res) << describe(res.error());
  } // the client closes after its answer: that is no undo
  // Once the server has stopped accepting and its io_context has no work left, it has
  // handled that close to its end.
  srv.stop();
  ASSERT_TRUE(io.drain(10s)) << "the server still handles the connection";
  std::atomic<int> undone{0};
  std::lock_guard<std::mutex> guard{mtx};
  from.on_gone([&](const std::string&) { ++undone; });
  from.leave("closed later");
  EXPECT_EQ(undone, 0) << "an answered request is never undone";
  EXPECT_EQ(from.gone(), "");
}

TEST_F(unix_http_server_test, a_client_that_hangs_up_after_reading_its_answer_never_undoes_it) {
  // The close may be seen before the write's completion runs: it must not count.
  std::atomic<int> undone{0};
  std::mutex mtx;
  std::vector<std::thread> repliers; // answers come from other threads, as from actors
  unix_http_server srv{io.io, [&](const std::string&, const std::string&, std::string,
                                  reply_fn reply, const caller& who) {
                         std::lock_guard<std::mutex> guard{mtx};
                         repliers.emplace_back([&undone, reply, who] {
                           who.on_gone([&undone](const std::string&) { ++undone; });
                           reply(200, "text/plain", "ok");
                         });
                       }};
  ASSERT_FALSE(srv.listen(path));
  for (int i = 0; i < 300; ++i) {
    // Keep-alive: the client, not the server, closes, right after the answer's last byte.
    boost::asio::io_context ctx;
    local::socket s{ctx};
    s.connect(local::endpoint{path});
    std::string req = "POST /m HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\n\r\n";
    boost::asio::write(s, boost::asio::buffer(req));
    std::string out;
    char buf[512];
    boost::system::error_code err;
    while (out.find("\r\n\r\nok") == std::string::npos && !err) {
      auto n = s.read_some(boost::asio::buffer(buf), err);
      out.append(buf, n);
    }
    ASSERT_NE(out.find("200 OK"), std::string::npos) << out;
    s.close();
  }
  {
    std::lock_guard<std::mutex> guard{mtx};
    for (auto& t : repliers) {
      t.join();
    }
  }
  // Every write's completion and every close has been handled once the server has
  // stopped accepting and its io_context has no work left.
  srv.stop();
  ASSERT_TRUE(io.drain(10s)) << "the server still handles a connection";
  EXPECT_EQ(undone, 0) << "an answer the client read was taken as undelivered";
}

TEST_F(unix_http_server_test, a_request_names_its_peer_process_read_once_per_connection) {
  // The plugin socket's client is dockerd: SO_PEERCRED on the accepted end names it. The
  // read happens once per connection (no syscall per request on a keep-alive connection).
  std::mutex mtx;
  std::vector<caller> callers; // kept, so no peer object is freed and its address reused
  std::vector<const process_stat*> seen;
  std::vector<process_stat> values;
  unix_http_server srv{io.io, [&](const std::string&, const std::string&, std::string,
                                  reply_fn reply, const caller& from) {
                         {
                           std::lock_guard<std::mutex> guard{mtx};
                           callers.push_back(from);
                           seen.push_back(from.peer());
                           if (from.peer()) {
                             values.push_back(*from.peer());
                           }
                         }
                         reply(200, "text/plain", "ok");
                       }};
  ASSERT_FALSE(srv.listen(path));
  {
    unix_http_client client{path};
    for (int i = 0; i < 3; ++i) {
      ASSERT_TRUE(client.post("/x", "{}"));
    }
  }
  {
    unix_http_client other{path};
    ASSERT_TRUE(other.post("/x", "{}"));
  }
  std::lock_guard<std::mutex> guard{mtx};
  ASSERT_EQ(seen.size(), 4u);
  ASSERT_EQ(values.size(), 4u) << "every request on a unix socket knows its peer";
  EXPECT_EQ(seen[0], seen[1]);
  EXPECT_EQ(seen[1], seen[2]) << "one connection, one read of /proc";
  EXPECT_NE(seen[2], seen[3]) << "a new connection reads its own peer";
  for (const auto& v : values) {
    EXPECT_EQ(v.pid, ::getpid());
    EXPECT_EQ(v.start_ticks, read_process_stat(::getpid()).start_ticks);
  }
}
