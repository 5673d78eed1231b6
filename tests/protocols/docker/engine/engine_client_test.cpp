#include "protocols/docker/engine/engine_client.hpp"

#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <thread>

#include <gtest/gtest.h>

#include "core/errors.hpp"
#include "tests/protocols/docker/engine/canned_server.hpp"

using namespace berth;
using namespace berth::docker_engine;
using berth::docker_engine::testing::canned_server;
using namespace std::chrono_literals;

namespace {

std::string data(const std::string& name) {
  std::ifstream in{std::string{BERTH_DOCKER_ENGINE_DATA} + "/" + name};
  std::ostringstream out;
  out << in.rdbuf();
  return out.str();
}

std::string json_answer(const std::string& body, unsigned status = 200) {
  return "HTTP/1.1 " + std::to_string(status) + " X\r\nContent-Type: application/json\r\nApi-Version: 1.41\r\n"
         "Content-Length: " + std::to_string(body.size()) + "\r\n\r\n" + body;
}

std::string chunk(const std::string& bytes) {
  std::ostringstream out;
  out << std::hex << bytes.size() << "\r\n" << bytes << "\r\n";
  return out.str();
}

class docker_engine_client : public ::testing::Test {
protected:
  void SetUp() override {
    char tmpl[] = "/tmp/berth-engine-test.XXXXXX";
    ASSERT_NE(::mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
    sock_ = dir_ + "/docker.sock";
  }
  void TearDown() override {
    ::unlink(sock_.c_str());
    ::rmdir(dir_.c_str());
  }
  engine_client client(std::chrono::milliseconds timeout = 2000ms) {
    return engine_client{sock_, engine_client::options{timeout}};
  }
  std::string dir_;
  std::string sock_;
};

} // namespace

TEST_F(docker_engine_client, an_absent_socket_is_unavailable_naming_the_path) {
  auto c = client();
  auto r = c.ping();
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error(), ec::unavailable);
  auto msg = describe(r.error());
  EXPECT_NE(msg.find("unix://" + sock_), std::string::npos) << msg;
  EXPECT_NE(msg.find("GET /_ping: connect:"), std::string::npos) << msg;
  EXPECT_NE(msg.find("is dockerd running"), std::string::npos) << msg;
}

TEST_F(docker_engine_client, a_socket_nobody_accepts_on_is_refused) {
  canned_server bound_only{sock_, [](int, const std::string&) {}, false};
  auto c = client();
  auto r = c.info();
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error(), ec::unavailable);
  auto msg = describe(r.error());
  EXPECT_NE(msg.find(sock_), std::string::npos) << msg;
  EXPECT_NE(msg.find("Connection refused"), std::string::npos) << msg;
  EXPECT_NE(msg.find("nothing accepts on the socket"), std::string::npos) << msg;
}

TEST_F(docker_engine_client, a_socket_that_never_answers_times_out) {
  canned_server silent{sock_, [&](int fd, const std::string&) { silent.wait_for_close(fd); }};
  auto c = client(300ms);
  auto start = std::chrono::steady_clock::now();
  auto r = c.containers();
  auto took = std::chrono::steady_clock::now() - start;
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error(), ec::timeout);
  auto msg = describe(r.error());
  EXPECT_NE(msg.find(sock_), std::string::npos) << msg;
  EXPECT_NE(msg.find("no answer within 300 ms (read)"), std::string::npos) << msg;
  EXPECT_GE(took, 300ms);
  EXPECT_LT(took, 3s);
}

TEST_F(docker_engine_client, an_events_stream_that_never_sends_its_header_times_out) {
  canned_server silent{sock_, [&](int fd, const std::string&) { silent.wait_for_close(fd); }};
  auto c = client(300ms);
  stop_signal stop;
  auto r = c.events({}, stop);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error(), ec::timeout);
}

TEST_F(docker_engine_client, ping_reads_the_headers_and_who_answered) {
  auto raw = data("ping_20.10.http");
  canned_server srv{sock_, [&](int fd, const std::string&) { canned_server::write_all(fd, raw); }};
  auto c = client();
  auto r = c.ping();
  ASSERT_TRUE(r) << describe(r.error());
  EXPECT_EQ(r->api_version, "1.41");
  EXPECT_EQ(r->server, "Docker/20.10.24+dfsg1 (linux)");
  // The stand-in runs in this process: the peer is this process.
  EXPECT_EQ(r->instance.pid, ::getpid());
  EXPECT_GT(r->instance.start_ticks, 0u);
  ASSERT_EQ(srv.requests().size(), 1u);
  EXPECT_EQ(srv.requests()[0].rfind("GET /_ping HTTP/1.1\r\n", 0), 0u) << srv.requests()[0];
}

TEST_F(docker_engine_client, info_and_containers_are_pinned_to_v1_41) {
  auto info = data("info_20.10.json");
  auto list = data("containers_20.10.json");
  canned_server srv{sock_, [&](int fd, const std::string& req) {
                      canned_server::write_all(fd, json_answer(req.find("/info") != std::string::npos ? info : list));
                    }};
  auto c = client();
  auto i = c.info();
  ASSERT_TRUE(i) << describe(i.error());
  EXPECT_EQ(i->server_version, "20.10.24+dfsg1");
  EXPECT_EQ(i->instance.pid, ::getpid());
  auto l = c.containers();
  ASSERT_TRUE(l) << describe(l.error());
  EXPECT_EQ(l->items.size(), 2u);
  auto reqs = srv.requests();
  ASSERT_EQ(reqs.size(), 2u);
  EXPECT_EQ(reqs[0].rfind("GET /v1.41/info HTTP/1.1", 0), 0u);
  EXPECT_EQ(reqs[1].rfind("GET /v1.41/containers/json?all=1 HTTP/1.1", 0), 0u);
}

TEST_F(docker_engine_client, an_error_status_names_dockerds_message) {
  canned_server srv{sock_, [&](int fd, const std::string&) {
                      canned_server::write_all(fd, json_answer(R"({"message":"client version 1.41 is too new. Maximum supported API version is 1.40"})", 400));
                    }};
  auto c = client();
  auto r = c.info();
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error(), ec::failed_precondition);
  auto msg = describe(r.error());
  EXPECT_NE(msg.find("HTTP 400"), std::string::npos) << msg;
  EXPECT_NE(msg.find("Maximum supported API version is 1.40"), std::string::npos) << msg;
}

TEST_F(docker_engine_client, events_are_split_across_chunks_and_stop_from_another_thread) {
  std::istringstream lines{data("events_20.10.jsonl")};
  std::string all = lines.str();
  canned_server srv{sock_, [&](int fd, const std::string&) {
                      canned_server::write_all(fd, "HTTP/1.1 200 OK\r\nApi-Version: 1.41\r\nContent-Type: application/json\r\n"
                                                   "Transfer-Encoding: chunked\r\n\r\n");
                      // One event split over two chunks, then the rest in one, then silence.
                      // The split is in the chunked framing, whatever reads the bytes arrive in.
                      canned_server::write_all(fd, chunk(all.substr(0, 100)));
                      canned_server::write_all(fd, chunk(all.substr(100)));
                      srv.wait_for_close(fd);
                    }};
  auto c = client();
  stop_signal stop;
  std::thread stopper;
  std::vector<container_event> seen;
  engine_instance opened;
  event_handler h;
  h.on_open = [&](const engine_instance& who) { opened = who; };
  h.on_event = [&](const container_event& ev) {
    seen.push_back(ev);
    if (seen.size() == 7) {
      // The last event: stop from another thread while the stream waits for more.
      stopper = std::thread{[&stop] { stop.request_stop(); }};
    }
  };
  auto start = std::chrono::steady_clock::now();
  auto r = c.events(h, stop, 1796134945825033899);
  auto took = std::chrono::steady_clock::now() - start;
  if (stopper.joinable()) {
    stopper.join();
  }
  ASSERT_TRUE(r) << describe(r.error());
  EXPECT_EQ(*r, events_end::stopped);
  EXPECT_LT(took, 5s);
  ASSERT_EQ(seen.size(), 7u);
  EXPECT_EQ(seen[3].action, "die");
  EXPECT_EQ(seen[3].exit_code, 3);
  EXPECT_EQ(opened.pid, ::getpid());
  auto req = srv.requests().at(0);
  EXPECT_EQ(req.rfind("GET /v1.41/events?filters=%7B%22type%22%3A%5B%22container%22%5D%7D"
                      "&since=1796134945.825033899 HTTP/1.1",
                      0),
            0u)
    << req;
}

// The call timeout bounds the call until the header; an open stream is bounded only by its
// silence. With a call timeout below the idle bound, the stream must last to the idle bound.
TEST_F(docker_engine_client, an_open_stream_outlives_the_call_timeout_until_its_idle_bound) {
  canned_server srv{sock_, [&](int fd, const std::string&) {
                      canned_server::write_all(
                        fd,
                        "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
                          + chunk(R"({"Action":"start","Actor":{"ID":"abc"},"timeNano":5})"
                                  "\n"));
                      srv.wait_for_close(fd);
                    }};
  const auto call_timeout = 300ms; // room to connect and read the header on a loaded machine
  const auto idle = 3 * call_timeout;
  engine_client c{sock_, engine_client::options{call_timeout, idle}};
  stop_signal stop;
  int n = 0;
  event_handler h;
  h.on_event = [&](const container_event&) { ++n; };
  auto start = std::chrono::steady_clock::now();
  auto r = c.events(h, stop);
  auto took = std::chrono::steady_clock::now() - start;
  ASSERT_TRUE(r) << describe(r.error());
  EXPECT_EQ(*r, events_end::idle);
  EXPECT_EQ(n, 1);
  EXPECT_GE(took, idle) << "the call timeout cut the open stream";
  EXPECT_LT(took, 5s);
}

TEST_F(docker_engine_client, events_end_closed_when_dockerd_ends_the_stream) {
  canned_server srv{sock_, [&](int fd, const std::string&) {
                      canned_server::write_all(fd, "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n" +
                                                     chunk(R"({"Action":"start","Actor":{"ID":"abc"},"timeNano":5})" "\n") +
                                                     "0\r\n\r\n");
                    }};
  auto c = client();
  stop_signal stop;
  int n = 0;
  event_handler h;
  h.on_event = [&](const container_event&) { ++n; };
  auto r = c.events(h, stop);
  ASSERT_TRUE(r) << describe(r.error());
  EXPECT_EQ(*r, events_end::closed);
  EXPECT_EQ(n, 1);
}

TEST_F(docker_engine_client, a_stop_raised_before_the_call_returns_at_once) {
  canned_server silent{sock_, [&](int fd, const std::string&) { silent.wait_for_close(fd); }};
  auto c = client(5000ms);
  stop_signal stop;
  stop.request_stop();
  auto r = c.events({}, stop);
  ASSERT_TRUE(r);
  EXPECT_EQ(*r, events_end::stopped);
}

TEST_F(docker_engine_client, a_stop_while_waiting_for_the_header_returns_stopped) {
  stop_signal stop;
  // The request has arrived: the client has sent it and waits for the header, or is about to.
  canned_server silent{sock_, [&](int fd, const std::string&) {
                         stop.request_stop();
                         silent.wait_for_close(fd);
                       }};
  auto c = client(5000ms);
  auto start = std::chrono::steady_clock::now();
  auto r = c.events({}, stop);
  ASSERT_TRUE(r) << describe(r.error());
  EXPECT_EQ(*r, events_end::stopped);
  EXPECT_LT(std::chrono::steady_clock::now() - start, 2s);
}

// dockerd sends nothing while nothing happens, so only a bound on silence notices a stream
// that died without closing or a dockerd that hung after its 200.
TEST_F(docker_engine_client, a_stream_silent_for_the_idle_bound_ends_as_idle) {
  canned_server srv{sock_, [&](int fd, const std::string&) {
                      canned_server::write_all(fd, "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n" +
                                                     chunk(R"({"Action":"start","Actor":{"ID":"abc"},"timeNano":5})" "\n"));
                      srv.wait_for_close(fd);
                    }};
  engine_client c{sock_, engine_client::options{2000ms, 300ms}};
  stop_signal stop;
  int n = 0;
  event_handler h;
  h.on_event = [&](const container_event&) { ++n; };
  auto start = std::chrono::steady_clock::now();
  auto r = c.events(h, stop);
  ASSERT_TRUE(r) << describe(r.error());
  EXPECT_EQ(*r, events_end::idle);
  EXPECT_EQ(n, 1);
  EXPECT_GE(std::chrono::steady_clock::now() - start, 300ms);
}
