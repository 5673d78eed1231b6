// The metrics endpoint over real TCP: tcp_http_server on 127.0.0.1:0 in front of
// metrics_api, a real actor system, and actors that answer /healthz's requests or not.

#include "protocols/metrics/metrics_api.hpp"

#include <memory>
#include <string>
#include <vector>

#include <boost/asio/connect.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http.hpp>
#include <caf/all.hpp>
#include <gtest/gtest.h>

#include "core/errors.hpp"
#include "protocols/http/tcp_http_server.hpp"
#include "protocols/metrics/exposition.hpp"
#include "tests/protocols/test_util.hpp"

namespace berth {
namespace {

namespace http = boost::beast::http;
using tcp = boost::asio::ip::tcp;

struct response {
  unsigned status = 0;
  std::string content_type;
  std::string body;
};

/// One request on a fresh TCP connection to "HOST:PORT".
response fetch(const std::string& address, const std::string& method, const std::string& target) {
  auto hp = parse_host_port(address);
  EXPECT_TRUE(hp);
  boost::asio::io_context ctx;
  tcp::socket sock{ctx};
  sock.connect(tcp::endpoint{boost::asio::ip::make_address(hp->host), hp->port});
  http::request<http::string_body> req{http::string_to_verb(method), target, 11};
  req.set(http::field::host, address);
  req.prepare_payload();
  http::write(sock, req);
  boost::beast::flat_buffer buf;
  http::response<http::string_body> res;
  http::read(sock, buf, res);
  return {res.result_int(), std::string{res[http::field::content_type]}, res.body()};
}

// Both stand-ins take an unused argument, and are spawned with one: CAF 0.17 dereferences a
// null argument tuple when a function actor is spawned without arguments (UBSan reports it).

/// Answers ping and flush at once, as the registry and persistence actors do.
caf::behavior answering(caf::event_based_actor*, int) {
  return {
    [](atom::ping) { return atom::ok_v; },
    [](atom::flush) { return atom::ok_v; },
  };
}

/// Takes ping and flush and never answers, like an actor stuck in a long call.
caf::behavior silent(caf::event_based_actor* self, int) {
  auto held = std::make_shared<std::vector<caf::response_promise>>();
  return {
    [self, held](atom::ping) { held->push_back(self->make_response_promise()); },
    [self, held](atom::flush) { held->push_back(self->make_response_promise()); },
  };
}

class metrics_api_test : public ::testing::Test {
protected:
  caf::actor_system_config cfg;
  std::unique_ptr<caf::actor_system> sys;
  std::shared_ptr<telemetry> stats = std::make_shared<telemetry>(std::vector<std::string>{"local"});
  std::unique_ptr<metrics_api> api;
  test::io_threads io;
  std::unique_ptr<tcp_http_server> srv;
  std::string address;
  std::vector<caf::actor> spawned;

  void SetUp() override {
    cfg.add_message_types<caf::id_block::berth>();
    sys = std::make_unique<caf::actor_system>(cfg);
    api = std::make_unique<metrics_api>(*sys, stats, std::chrono::milliseconds(300));
    http_server_limits lim;
    lim.body_limit = limits::max_metrics_request_bytes;
    srv = std::make_unique<tcp_http_server>(
      io.io,
      [this](const std::string& method, const std::string& target, std::string, reply_fn reply,
             const caller&) { api->handle(method, target, std::move(reply)); },
      lim, "metrics");
    auto bound = srv->listen("127.0.0.1:0");
    ASSERT_TRUE(bound) << describe(bound.error());
    address = *bound;
  }

  void TearDown() override {
    srv->stop();
    io.stop();
    for (auto& a : spawned) {
      caf::anon_send_exit(a, caf::exit_reason::user_shutdown);
    }
    api.reset();
  }

  /// Gives the endpoint a registry and a persistence actor (answering or silent).
  void attach(bool registry_answers, bool persistence_answers) {
    auto reg = sys->spawn(registry_answers ? answering : silent, 0);
    auto per = sys->spawn(persistence_answers ? answering : silent, 0);
    spawned.push_back(reg);
    spawned.push_back(per);
    api->attach(caf::actor_cast<registry_actor>(reg), caf::actor_cast<persistence_actor>(per));
  }

  response get(const std::string& target) {
    return fetch(address, "GET", target);
  }
};

TEST_F(metrics_api_test, binds_any_free_port_and_says_which) {
  EXPECT_EQ(address.rfind("127.0.0.1:", 0), 0u) << address;
  EXPECT_NE(address, "127.0.0.1:0");
  auto port = std::stoul(address.substr(address.find(':') + 1));
  EXPECT_GT(port, 0u);
}

TEST_F(metrics_api_test, serves_the_page_with_the_exposition_content_type) {
  stats->operations.record("docker", "mount", "ok", 0.001);
  auto res = get("/metrics");
  EXPECT_EQ(res.status, 200u);
  EXPECT_EQ(res.content_type, metrics::content_type);
  EXPECT_NE(res.body.find("# TYPE berth_ready gauge\nberth_ready 0\n"), std::string::npos)
    << res.body;
  EXPECT_NE(res.body.find("berth_operations_total{code=\"ok\",operation=\"mount\","
                          "protocol=\"docker\"} 1\n"),
            std::string::npos)
    << res.body;
  EXPECT_EQ(get("/metrics?x=1").status, 200u); // a query string changes nothing
}

TEST_F(metrics_api_test, other_paths_are_404_and_other_methods_405) {
  auto missing = get("/");
  EXPECT_EQ(missing.status, 404u);
  EXPECT_NE(missing.body.find("/metrics, /healthz and /readyz"), std::string::npos);
  EXPECT_EQ(get("/metricsx").status, 404u);
  EXPECT_EQ(get("/v1/volumes").status, 404u);
  for (auto target : {"/metrics", "/healthz", "/readyz"}) {
    auto res = fetch(address, "POST", target);
    EXPECT_EQ(res.status, 405u) << target;
    EXPECT_NE(res.body.find("use GET"), std::string::npos) << res.body;
    EXPECT_EQ(fetch(address, "DELETE", target).status, 405u) << target;
  }
}

TEST_F(metrics_api_test, readyz_follows_the_readiness_flags) {
  auto loading = get("/readyz");
  EXPECT_EQ(loading.status, 503u);
  EXPECT_EQ(loading.body, "not ready: the state is loading\n");
  stats->ready.state_loaded = true;
  stats->volumes.reconcile_pending.set(2);
  auto reconciling = get("/readyz");
  EXPECT_EQ(reconciling.status, 503u);
  EXPECT_EQ(reconciling.body, "not ready: 2 volume(s) still reconciling with the host\n");
  stats->volumes.reconcile_pending.set(0);
  EXPECT_EQ(get("/readyz").body, "not ready: the sockets are not accepting yet\n");
  stats->ready.serving = true;
  auto ready = get("/readyz");
  EXPECT_EQ(ready.status, 200u);
  EXPECT_EQ(ready.body, "ok\n");
  EXPECT_NE(get("/metrics").body.find("\nberth_ready 1\n"), std::string::npos);
}

TEST_F(metrics_api_test, healthz_is_loading_before_the_actors_exist_then_asks_them) {
  auto loading = get("/healthz");
  EXPECT_EQ(loading.status, 200u);
  EXPECT_EQ(loading.body, "loading\n");
  attach(true, true);
  auto ok = get("/healthz");
  EXPECT_EQ(ok.status, 200u);
  EXPECT_EQ(ok.body, "ok\n");
}

TEST_F(metrics_api_test, healthz_names_the_registry_when_it_does_not_answer) {
  attach(false, true);
  auto res = get("/healthz");
  EXPECT_EQ(res.status, 503u);
  EXPECT_EQ(res.body, "unhealthy: the registry actor did not answer within 300 ms\n");
}

TEST_F(metrics_api_test, healthz_names_the_persistence_actor_when_it_does_not_answer) {
  attach(true, false);
  auto res = get("/healthz");
  EXPECT_EQ(res.status, 503u);
  EXPECT_EQ(res.body, "unhealthy: the persistence actor did not answer within 300 ms\n");
}

TEST_F(metrics_api_test, healthz_names_an_actor_that_is_gone) {
  auto reg = sys->spawn(answering, 0);
  auto per = sys->spawn(answering, 0);
  spawned.push_back(per);
  api->attach(caf::actor_cast<registry_actor>(reg), caf::actor_cast<persistence_actor>(per));
  caf::anon_send_exit(reg, caf::exit_reason::kill);
  caf::scoped_actor self{*sys};
  self->wait_for(reg);
  auto res = get("/healthz");
  EXPECT_EQ(res.status, 503u);
  EXPECT_NE(res.body.find("the registry actor failed"), std::string::npos) << res.body;
}

// -- the address -----------------------------------------------------------------------

TEST(host_port, parses_ipv4_ipv6_and_names) {
  auto a = parse_host_port("127.0.0.1:9808");
  ASSERT_TRUE(a);
  EXPECT_EQ(a->host, "127.0.0.1");
  EXPECT_EQ(a->port, 9808);
  auto b = parse_host_port("[::1]:0");
  ASSERT_TRUE(b);
  EXPECT_EQ(b->host, "::1");
  EXPECT_EQ(b->port, 0);
  auto c = parse_host_port("localhost:65535");
  ASSERT_TRUE(c);
  EXPECT_EQ(c->host, "localhost");
}

TEST(host_port, refuses_what_is_not_host_colon_port) {
  for (auto bad : {"", "9808", "127.0.0.1", ":9808", "127.0.0.1:", "127.0.0.1:65536",
                   "127.0.0.1:99999999", "127.0.0.1:-1", "127.0.0.1:80x", "::1:9808", "[::1",
                   "[::1]9808", "[]:9808"}) {
    auto hp = parse_host_port(bad);
    ASSERT_FALSE(hp) << bad;
    auto msg = describe(hp.error());
    EXPECT_NE(msg.find(std::string{"'"} + bad + "'"), std::string::npos) << msg;
    EXPECT_NE(msg.find("HOST:PORT"), std::string::npos) << msg;
  }
}

TEST(tcp_http_server, refuses_an_address_in_use_naming_it) {
  test::io_threads io;
  auto echo = [](const std::string&, const std::string&, std::string, reply_fn reply,
                 const caller&) { reply(200, "text/plain", "x"); };
  tcp_http_server first{io.io, echo, {}, "first"};
  auto bound = first.listen("127.0.0.1:0");
  ASSERT_TRUE(bound) << describe(bound.error());
  tcp_http_server second{io.io, echo, {}, "second"};
  auto again = second.listen(*bound);
  ASSERT_FALSE(again);
  EXPECT_NE(describe(again.error()).find("cannot bind " + *bound), std::string::npos)
    << describe(again.error());
  auto unresolvable = second.listen("no-such-host.invalid:1");
  ASSERT_FALSE(unresolvable);
  EXPECT_NE(describe(unresolvable.error()).find("no-such-host.invalid:1"), std::string::npos)
    << describe(unresolvable.error());
  first.stop();
  io.stop();
}

} // namespace
} // namespace berth
