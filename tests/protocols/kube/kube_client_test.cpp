#include "protocols/kube/kube_client.hpp"

#include <set>

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <gtest/gtest.h>

#include "protocols/kube/detail/text.hpp"
#include "protocols/kube/kube_factory.hpp"
#include "tests/persistence/temp_dir.hpp"
#include "tests/protocols/kube/kube_fixture.hpp"

using namespace berth;
using namespace berth::kube;
using namespace berth::test;
using namespace std::chrono_literals;

namespace {

using kube_client_test = kube_fixture;

/// A loopback port nobody listens on.
unsigned short closed_port() {
  boost::asio::io_context io;
  boost::asio::ip::tcp::acceptor a{io, {boost::asio::ip::make_address("127.0.0.1"), 0}};
  auto port = a.local_endpoint().port();
  a.close();
  return port;
}

} // namespace

TEST_F(kube_client_test, get_node_reads_unschedulable_and_taints) {
  api.set_node("n1", {true, true, {{"ToBeDeletedByClusterAutoscaler", "1700000000", "NoSchedule"}}});
  api.set_node("n2", {true, false, {}});
  auto n1 = client->get_node("n1", in(5s));
  ASSERT_TRUE(n1) << describe(n1.error());
  EXPECT_TRUE(n1->found);
  EXPECT_TRUE(n1->unschedulable);
  ASSERT_EQ(n1->taints.size(), 1u);
  EXPECT_EQ(n1->taints[0].key, "ToBeDeletedByClusterAutoscaler");
  EXPECT_EQ(n1->taints[0].value, "1700000000");
  EXPECT_EQ(n1->taints[0].effect, "NoSchedule");
  auto n2 = client->get_node("n2", in(5s));
  ASSERT_TRUE(n2);
  EXPECT_TRUE(n2->found);
  EXPECT_FALSE(n2->unschedulable);
  EXPECT_TRUE(n2->taints.empty());
}

TEST_F(kube_client_test, get_unknown_node_is_not_found_not_an_error) {
  auto gone = client->get_node("nope", in(5s));
  ASSERT_TRUE(gone) << describe(gone.error());
  EXPECT_FALSE(gone->found);
  EXPECT_EQ(api.requests().node_gets, 1u);
}

TEST_F(kube_client_test, host_name_is_resolved_and_verified) {
  api.set_node("n1", {true, true, {}});
  config.server = "https://localhost:" + std::to_string(api.port());
  config.host = "localhost";
  auto c = client_for(config);
  auto n = c->get_node("n1", in(5s));
  ASSERT_TRUE(n) << describe(n.error());
  EXPECT_TRUE(n->unschedulable);
}

TEST_F(kube_client_test, list_pages_with_continue) {
  std::set<std::string> want;
  for (int i = 0; i < 5; ++i) {
    auto name = "va-" + std::to_string(i);
    api.add_attachment({name, "n1", "berth.csi.dev", "pv-" + std::to_string(i)});
    want.insert(name);
  }
  std::set<std::string> seen;
  std::string next;
  std::string rv;
  int pages = 0;
  do {
    auto page = client->list_attachments(next, 2, in(5s));
    ASSERT_TRUE(page) << describe(page.error());
    ++pages;
    if (rv.empty()) {
      rv = page->resource_version;
    }
    EXPECT_EQ(page->resource_version, rv) << "every page carries the first page's resourceVersion";
    EXPECT_LE(page->items.size(), 2u);
    for (const auto& a : page->items) {
      EXPECT_EQ(a.attacher, "berth.csi.dev");
      EXPECT_EQ(a.node, "n1");
      EXPECT_EQ(a.volume, "pv-" + a.name.substr(3));
      seen.insert(a.name);
    }
    next = page->next;
  } while (!next.empty() && pages < 10);
  EXPECT_EQ(pages, 3);
  EXPECT_EQ(seen, want);
  EXPECT_EQ(rv, api.resource_version());
}

TEST_F(kube_client_test, list_continue_after_compaction_is_410) {
  for (int i = 0; i < 3; ++i) {
    api.add_attachment({"va-" + std::to_string(i), "n1", "d", "pv"});
  }
  auto first = client->list_attachments("", 1, in(5s));
  ASSERT_TRUE(first);
  ASSERT_FALSE(first->next.empty());
  api.expire_resource_versions();
  auto second = client->list_attachments(first->next, 1, in(5s));
  ASSERT_FALSE(second);
  EXPECT_EQ(second.error(), ec::aborted);
  EXPECT_NE(describe(second.error()).find("410"), std::string::npos) << describe(second.error());
}

TEST_F(kube_client_test, wrong_token_is_refused_without_printing_it) {
  const std::string wrong = "wrong-token-value-5d1e";
  config.token = wrong;
  auto c = client_for(config);
  auto n = c->get_node("n1", in(5s));
  ASSERT_FALSE(n);
  auto text = describe(n.error());
  EXPECT_EQ(n.error(), ec::failed_precondition) << text;
  EXPECT_NE(text.find("refused"), std::string::npos) << text;
  EXPECT_NE(text.find("401"), std::string::npos) << text;
  EXPECT_EQ(text.find(wrong), std::string::npos) << text;
  EXPECT_EQ(text.find(api.token()), std::string::npos) << text;
  auto l = c->list_attachments("", 10, in(5s));
  ASSERT_FALSE(l);
  EXPECT_EQ(describe(l.error()).find(wrong), std::string::npos);
  auto w = c->watch_attachments("", [](const attachment_event&) { return true; }, in(5s));
  ASSERT_FALSE(w);
  EXPECT_EQ(w.error(), ec::failed_precondition);
  EXPECT_EQ(describe(w.error()).find(wrong), std::string::npos);
  EXPECT_EQ(api.requests().unauthorized, 3u);
}

TEST_F(kube_client_test, rotated_in_cluster_token_is_picked_up) {
  auto cfg = in_cluster_config(api.service_account_dir(), "127.0.0.1", std::to_string(api.port()));
  ASSERT_TRUE(cfg) << describe(cfg.error());
  auto c = client_for(*cfg);
  ASSERT_TRUE(c->get_node("n1", in(5s)));
  api.set_token("rotated-token-2");
  auto stale = c->get_node("n1", in(5s));
  ASSERT_FALSE(stale);
  EXPECT_EQ(stale.error(), ec::failed_precondition);
  test::write_text(api.service_account_dir() + "/token", "rotated-token-2\n");
  auto fresh = c->get_node("n1", in(5s));
  EXPECT_TRUE(fresh) << describe(fresh.error());
}

TEST_F(kube_client_test, refused_connection_is_unavailable_naming_the_server) {
  config.port = std::to_string(closed_port());
  config.server = "https://127.0.0.1:" + config.port;
  auto c = client_for(config);
  auto start = std::chrono::steady_clock::now();
  auto n = c->get_node("n1", in(5s));
  ASSERT_FALSE(n);
  EXPECT_EQ(n.error(), ec::unavailable);
  auto text = describe(n.error());
  EXPECT_NE(text.find(config.server), std::string::npos) << text;
  EXPECT_NE(text.find("connect"), std::string::npos) << text;
  EXPECT_LT(std::chrono::steady_clock::now() - start, 2s);
}

TEST_F(kube_client_test, silent_server_is_bounded_by_the_deadline) {
  api.set_stalled(true);
  for (int call = 0; call < 3; ++call) {
    auto start = std::chrono::steady_clock::now();
    caf::error err;
    if (call == 0) {
      err = client->get_node("n1", in(400ms)).error();
    } else if (call == 1) {
      err = client->list_attachments("", 10, in(400ms)).error();
    } else {
      err = client->watch_attachments("", [](const attachment_event&) { return true; }, in(400ms))
              .error();
    }
    auto took = std::chrono::steady_clock::now() - start;
    ASSERT_TRUE(err) << "call " << call;
    EXPECT_EQ(err, ec::timeout) << describe(err);
    EXPECT_NE(describe(err).find("deadline"), std::string::npos) << describe(err);
    EXPECT_GE(took, 350ms);
    EXPECT_LT(took, 1500ms);
  }
  api.set_stalled(false);
}

TEST_F(kube_client_test, certificate_of_another_ca_is_refused) {
  config.ca_pem = make_ca("some-other-ca").cert_pem;
  auto c = client_for(config);
  auto n = c->get_node("n1", in(5s));
  ASSERT_FALSE(n);
  auto text = describe(n.error());
  EXPECT_EQ(n.error(), ec::unavailable) << text;
  EXPECT_NE(text.find("TLS handshake"), std::string::npos) << text;
  EXPECT_NE(text.find("certificate verify failed"), std::string::npos) << text;
  EXPECT_EQ(api.requests().node_gets, 0u);
}

TEST(kube_client_tls, certificate_for_another_host_is_refused) {
  fake_apiserver::options opts;
  opts.server_sans = {"DNS:elsewhere.example", "IP:10.9.9.9"};
  fake_apiserver api{opts};
  api.start();
  auto cfg = kubeconfig_config(api.kubeconfig_path());
  ASSERT_TRUE(cfg);
  auto c = client_for(*cfg);
  auto n = c->get_node("n1", in(5s));
  ASSERT_FALSE(n);
  auto text = describe(n.error());
  EXPECT_NE(text.find("certificate verify failed"), std::string::npos) << text;
  EXPECT_NE(text.find("mismatch"), std::string::npos) << text;
}

TEST(kube_client_tls, bad_pem_in_config_is_refused_when_building) {
  kube_config cfg;
  ASSERT_FALSE(parse_server_url("https://127.0.0.1:1", cfg));
  cfg.origin = "test config";
  cfg.ca_pem = "not a certificate";
  auto c = kube_client::make(cfg);
  ASSERT_FALSE(c);
  EXPECT_NE(describe(c.error()).find("certificate authority"), std::string::npos)
    << describe(c.error());
}

TEST(kube_client_tls, client_certificate_from_a_kubeconfig_authenticates) {
  fake_apiserver::options opts;
  opts.client_certs = true;
  fake_apiserver api{opts};
  api.start();
  api.set_node("n1", {true, true, {}});
  auto write = [&](const cert_pair& client) {
    auto path = api.dir() + "/cert-kubeconfig";
    test::write_text(path, "apiVersion: v1\nkind: Config\nclusters:\n- name: c\n  cluster:\n"
                           "    server: " + api.server_url() + "\n"
                           "    certificate-authority-data: " + detail::base64_encode(api.ca_pem()) + "\n"
                           "users:\n- name: u\n  user:\n"
                           "    client-certificate-data: " + detail::base64_encode(client.cert_pem) + "\n"
                           "    client-key-data: " + detail::base64_encode(client.key_pem) + "\n"
                           "contexts:\n- name: x\n  context:\n    cluster: c\n    user: u\n"
                           "current-context: x\n");
    return path;
  };
  auto cfg = kubeconfig_config(write(api.issue_client_cert("system:node:n1")));
  ASSERT_TRUE(cfg) << describe(cfg.error());
  EXPECT_TRUE(cfg->token.empty());
  auto n = client_for(*cfg)->get_node("n1", in(5s));
  ASSERT_TRUE(n) << describe(n.error());
  EXPECT_TRUE(n->unschedulable);
  EXPECT_EQ(api.requests().by_certificate, 1u);

  // A certificate another CA signed is refused in the handshake.
  auto stranger = issue_cert(make_ca("stranger-ca"), "system:node:n1", {});
  auto bad = kubeconfig_config(write(stranger));
  ASSERT_TRUE(bad);
  auto refused = client_for(*bad)->get_node("n1", in(5s));
  ASSERT_FALSE(refused);
  EXPECT_EQ(api.requests().by_certificate, 1u);
}

TEST(kube_text, redact_hides_every_occurrence) {
  EXPECT_EQ(detail::redact("a tok b tok", "tok"), "a <redacted> b <redacted>");
  EXPECT_EQ(detail::redact("nothing", ""), "nothing");
}

TEST_F(kube_client_test, factory_builds_a_client_from_a_kubeconfig) {
  api.set_node("n1", {true, true, {}});
  auto made = make_kube_api(api.kubeconfig_path());
  ASSERT_TRUE(made) << describe(made.error());
  auto n = (*made)->get_node("n1", in(5s));
  ASSERT_TRUE(n) << describe(n.error());
  EXPECT_TRUE(n->unschedulable);
  auto missing = make_kube_api(api.dir() + "/no-such-kubeconfig");
  ASSERT_FALSE(missing);
  EXPECT_NE(describe(missing.error()).find("no-such-kubeconfig"), std::string::npos);
}
