// The client keeps its connections alive between calls, within a bound, and dials again
// after the server closed one or a call failed on it.

#include <thread>
#include <vector>

#include <boost/asio/ssl.hpp>
#include <gtest/gtest.h>

#include "core/limits.hpp"
#include "protocols/kube/detail/transport.hpp"
#include "tests/protocols/kube/kube_fixture.hpp"
#include "tests/support/captured_log.hpp"

using namespace berth;
using namespace berth::kube;
using namespace berth::test;
using namespace std::chrono_literals;

namespace {

using kube_keepalive_test = kube_fixture;

TEST_F(kube_keepalive_test, calls_one_after_another_share_one_connection) {
  api.set_node("n1", {true, false, {}});
  for (int i = 0; i < 20; ++i) {
    auto n = client->get_node("n1", in(5s));
    ASSERT_TRUE(n) << describe(n.error());
    ASSERT_TRUE(n->found);
  }
  auto page = client->list_attachments("", 10, in(5s));
  ASSERT_TRUE(page) << describe(page.error());
  auto gone = client->get_node("nope", in(5s)); // a 404 ends the exchange cleanly too
  ASSERT_TRUE(gone);
  EXPECT_EQ(api.requests().node_gets, 21u);
  EXPECT_EQ(api.requests().connections, 1u) << "one TLS handshake for 22 calls";
  EXPECT_EQ(client->idle_connections(), 1u);
}

TEST_F(kube_keepalive_test, a_connection_the_server_closed_is_dialled_again) {
  api.set_node("n1", {true, false, {}});
  ASSERT_TRUE(client->get_node("n1", in(5s)));
  api.close_idle_connections(); // as kube-apiserver does after 90 s idle
  auto n = client->get_node("n1", in(5s));
  ASSERT_TRUE(n) << describe(n.error());
  EXPECT_TRUE(n->found);
  EXPECT_EQ(api.requests().connections, 2u);
  EXPECT_EQ(api.requests().node_gets, 2u) << "the closed connection carried no request";
}

TEST_F(kube_keepalive_test, a_call_that_failed_leaves_its_connection_behind) {
  api.set_node("n1", {true, false, {}});
  ASSERT_TRUE(client->get_node("n1", in(5s)));
  // The token is refused: a 401 is a whole answer, and the connection stays.
  api.set_token("another-token");
  auto refused = client->get_node("n1", in(5s));
  ASSERT_FALSE(refused);
  EXPECT_EQ(api.requests().connections, 1u);
  // A watch that ends at its deadline, and one whose stream is cut: each had a connection
  // of its own, and none of them goes back.
  api.set_token(config.token);
  auto watched = client->watch_attachments("", [](const attachment_event&) { return true; }, in(300ms));
  ASSERT_TRUE(watched) << describe(watched.error());
  EXPECT_EQ(api.requests().connections, 2u);
  EXPECT_EQ(client->idle_connections(), 1u);
  ASSERT_TRUE(client->get_node("n1", in(5s)));
  EXPECT_EQ(api.requests().connections, 2u) << "the kept connection served the next call";
}

TEST_F(kube_keepalive_test, concurrent_calls_keep_at_most_the_bound_idle) {
  api.set_node("n1", {true, false, {}});
  std::vector<std::thread> callers;
  for (int i = 0; i < 12; ++i) {
    callers.emplace_back([this] {
      for (int k = 0; k < 5; ++k) {
        auto n = client->get_node("n1", in(10s));
        EXPECT_TRUE(n) << describe(n.error());
      }
    });
  }
  for (auto& t : callers) {
    t.join();
  }
  EXPECT_LE(client->idle_connections(), limits::kube_idle_connections);
  EXPECT_GE(client->idle_connections(), 1u);
  // The ones past the bound were closed by the client: the server sees them go.
  auto until = std::chrono::steady_clock::now() + 5s;
  while (api.open_connections() > limits::kube_idle_connections
         && std::chrono::steady_clock::now() < until) {
    std::this_thread::yield();
  }
  EXPECT_LE(api.open_connections(), limits::kube_idle_connections);
}

TEST_F(kube_keepalive_test, a_warning_of_the_server_is_logged_once) {
  api.set_node("n1", {true, false, {}});
  api.set_warning(R"(299 - "unknown field \"spec.unknown\"")");
  test_support::captured_log log;
  for (int i = 0; i < 3; ++i) {
    ASSERT_TRUE(client->get_node("n1", in(5s)));
  }
  EXPECT_EQ(log.count(R"(the server warns: 299 - "unknown field \"spec.unknown\"")"), 1) << log.out.str();
}

TEST(connection_pool, keeps_the_bound_and_drops_the_oldest) {
  boost::asio::ssl::context tls{boost::asio::ssl::context::tls_client};
  detail::connection_pool pool;
  for (size_t i = 0; i < limits::kube_idle_connections + 2; ++i) {
    pool.give_back(std::make_unique<detail::connection>(tls));
  }
  EXPECT_EQ(pool.idle(), limits::kube_idle_connections);
  // Never connected: none looks open, so none is handed out, and taking empties the pool.
  EXPECT_EQ(pool.take(), nullptr);
  EXPECT_EQ(pool.idle(), 0u);
}

} // namespace
