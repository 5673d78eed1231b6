#include "protocols/kube/kube_config.hpp"

#include <unistd.h>

#include <gtest/gtest.h>

#include "core/errors.hpp"
#include "protocols/kube/detail/text.hpp"
#include "tests/persistence/temp_dir.hpp"

using namespace berth;
using namespace berth::kube;
using berth::test::write_text;

namespace {

const std::string fake_ca = "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n";

class kube_config_test : public ::testing::Test {
protected:
  test::temp_dir dir;

  /// A kubeconfig whose user part is `user` (indented under "  user:").
  std::string write_kubeconfig(const std::string& cluster, const std::string& user,
                               const std::string& current = "current-context: ctx\n") {
    auto path = dir / "config";
    write_text(path, "apiVersion: v1\nkind: Config\nclusters:\n- name: c1\n  cluster:\n" + cluster +
                       "users:\n- name: u1\n  user:\n" + user +
                       "contexts:\n- name: ctx\n  context:\n    cluster: c1\n    user: u1\n"
                       "- name: other\n  context:\n    cluster: c1\n    user: u2\n" +
                       current);
    return path;
  }
};

const std::string good_cluster = "    server: https://api.example:6443\n"
                                 "    certificate-authority-data: " +
                                 kube::detail::base64_encode(fake_ca) + "\n";

} // namespace

TEST(kube_text, base64_round_trips_and_refuses_junk) {
  for (const std::string& s : std::vector<std::string>{"", "a", "ab", "abc", "abcd", std::string("\0\xff\x10", 3)}) {
    auto back = detail::base64_decode(detail::base64_encode(s));
    ASSERT_TRUE(back);
    EXPECT_EQ(*back, s);
  }
  EXPECT_FALSE(detail::base64_decode("ab$c"));
  EXPECT_EQ(*detail::base64_decode("aGVs\nbG8="), "hello");
  EXPECT_EQ(detail::url_encode("a b/c=d+"), "a%20b%2Fc%3Dd%2B");
}

TEST_F(kube_config_test, in_cluster_reads_token_and_ca) {
  write_text(dir / "token", "tok-123\n");
  write_text(dir / "ca.crt", fake_ca);
  auto cfg = in_cluster_config(dir.path(), "10.96.0.1", "443");
  ASSERT_TRUE(cfg) << describe(cfg.error());
  EXPECT_EQ(cfg->server, "https://10.96.0.1:443");
  EXPECT_EQ(cfg->host, "10.96.0.1");
  EXPECT_EQ(cfg->port, "443");
  EXPECT_EQ(cfg->ca_pem, fake_ca);
  EXPECT_EQ(cfg->token_file, dir / "token");
  EXPECT_EQ(*current_token(*cfg), "tok-123");
  EXPECT_EQ(cfg->describe().find("tok-123"), std::string::npos);
}

TEST_F(kube_config_test, in_cluster_brackets_an_ipv6_host) {
  write_text(dir / "token", "t");
  write_text(dir / "ca.crt", fake_ca);
  auto cfg = in_cluster_config(dir.path(), "fd00::1", "6443");
  ASSERT_TRUE(cfg) << describe(cfg.error());
  EXPECT_EQ(cfg->server, "https://[fd00::1]:6443");
  EXPECT_EQ(cfg->host, "fd00::1");
}

TEST_F(kube_config_test, in_cluster_errors_name_what_is_missing) {
  write_text(dir / "token", "t");
  auto no_ca = in_cluster_config(dir.path(), "10.0.0.1", "443");
  ASSERT_FALSE(no_ca);
  EXPECT_NE(describe(no_ca.error()).find(dir / "ca.crt"), std::string::npos) << describe(no_ca.error());
  write_text(dir / "ca.crt", fake_ca);
  auto no_env = in_cluster_config(dir.path(), "", "");
  ASSERT_FALSE(no_env);
  EXPECT_NE(describe(no_env.error()).find("KUBERNETES_SERVICE_HOST"), std::string::npos);
  ::unlink((dir / "token").c_str());
  auto no_token = in_cluster_config(dir.path(), "10.0.0.1", "443");
  ASSERT_FALSE(no_token);
  EXPECT_NE(describe(no_token.error()).find(dir / "token"), std::string::npos);
}

TEST_F(kube_config_test, token_file_is_read_again_after_rotation) {
  write_text(dir / "token", "first");
  write_text(dir / "ca.crt", fake_ca);
  auto cfg = in_cluster_config(dir.path(), "10.0.0.1", "443");
  ASSERT_TRUE(cfg);
  EXPECT_EQ(*current_token(*cfg), "first");
  write_text(dir / "token", "second\n");
  EXPECT_EQ(*current_token(*cfg), "second");
  write_text(dir / "token", "");
  auto empty = current_token(*cfg);
  ASSERT_FALSE(empty);
  EXPECT_NE(describe(empty.error()).find("empty"), std::string::npos);
}

TEST_F(kube_config_test, kubeconfig_with_token_and_ca_data) {
  auto path = write_kubeconfig(good_cluster, "    token: secret-tok\n");
  auto cfg = kubeconfig_config(path);
  ASSERT_TRUE(cfg) << describe(cfg.error());
  EXPECT_EQ(cfg->server, "https://api.example:6443");
  EXPECT_EQ(cfg->host, "api.example");
  EXPECT_EQ(cfg->ca_pem, fake_ca);
  EXPECT_EQ(cfg->token, "secret-tok");
  EXPECT_NE(cfg->origin.find("context ctx"), std::string::npos);
  EXPECT_EQ(cfg->describe().find("secret-tok"), std::string::npos);
}

TEST_F(kube_config_test, kubeconfig_with_files_relative_to_itself) {
  write_text(dir / "ca.pem", fake_ca);
  write_text(dir / "tok", " file-tok \n");
  auto path = write_kubeconfig("    server: https://10.1.2.3/prefix/\n    certificate-authority: ca.pem\n",
                               "    tokenFile: tok\n");
  auto cfg = kubeconfig_config(path);
  ASSERT_TRUE(cfg) << describe(cfg.error());
  EXPECT_EQ(cfg->ca_pem, fake_ca);
  EXPECT_EQ(cfg->port, "443");
  EXPECT_EQ(cfg->base_path, "/prefix");
  EXPECT_EQ(cfg->token_file, dir / "tok");
  EXPECT_EQ(*current_token(*cfg), "file-tok");
}

TEST_F(kube_config_test, kubeconfig_with_client_certificate) {
  write_text(dir / "client.key", "KEY");
  auto path = write_kubeconfig(good_cluster,
                               "    client-certificate-data: " + detail::base64_encode("CERT") +
                                 "\n    client-key: client.key\n");
  auto cfg = kubeconfig_config(path);
  ASSERT_TRUE(cfg) << describe(cfg.error());
  EXPECT_EQ(cfg->client_cert_pem, "CERT");
  EXPECT_EQ(cfg->client_key_pem, "KEY");
  EXPECT_TRUE(cfg->token.empty());
}

TEST_F(kube_config_test, kubeconfig_names_the_other_context_when_asked) {
  auto path = write_kubeconfig(good_cluster, "    token: t\n");
  auto cfg = kubeconfig_config(path, "other");
  ASSERT_FALSE(cfg);
  auto text = describe(cfg.error());
  EXPECT_NE(text.find("context other"), std::string::npos) << text;
  EXPECT_NE(text.find("no user named u2"), std::string::npos) << text;
}

TEST_F(kube_config_test, kubeconfig_errors_name_file_context_and_field) {
  struct bad_case {
    std::string cluster, user, current, expect;
  };
  std::vector<bad_case> cases = {
    {good_cluster, "    token: t\n", "", "no current-context"},
    {good_cluster, "    token: t\n", "current-context: nope\n", "no context named nope"},
    {"    certificate-authority-data: eA==\n", "    token: t\n", "current-context: ctx\n",
     "has no server"},
    {"    server: http://api:80\n", "    token: t\n", "current-context: ctx\n", "not an https:// URL"},
    {"    server: https://api:99999\n", "    token: t\n", "current-context: ctx\n", "bad port"},
    {good_cluster + "    insecure-skip-tls-verify: true\n", "    token: t\n", "current-context: ctx\n",
     "insecure-skip-tls-verify"},
    {"    server: https://api\n    certificate-authority: missing.pem\n", "    token: t\n",
     "current-context: ctx\n", "certificate-authority " + dir / "missing.pem"},
    {"    server: https://api\n    certificate-authority-data: '%%%'\n", "    token: t\n",
     "current-context: ctx\n", "certificate-authority-data is not valid base64"},
    {good_cluster, "    username: bob\n", "current-context: ctx\n", "user u1: no credentials"},
    {good_cluster, "    exec:\n      command: aws\n", "current-context: ctx\n", "not supported"},
    {good_cluster, "    client-certificate-data: eA==\n", "current-context: ctx\n",
     "client-certificate needs client-key"},
    {good_cluster, "    tokenFile: /nonexistent/token\n", "current-context: ctx\n",
     "/nonexistent/token"},
  };
  for (const auto& c : cases) {
    auto path = write_kubeconfig(c.cluster, c.user, c.current);
    auto cfg = kubeconfig_config(path);
    ASSERT_FALSE(cfg) << c.expect;
    auto text = describe(cfg.error());
    EXPECT_EQ(cfg.error(), ec::invalid_argument) << text;
    EXPECT_NE(text.find(c.expect), std::string::npos) << text;
    EXPECT_NE(text.find(path), std::string::npos) << text;
    if (!c.current.empty() && c.current != "current-context: nope\n") {
      EXPECT_NE(text.find("context ctx"), std::string::npos) << text;
    }
  }
}

TEST_F(kube_config_test, kubeconfig_that_is_missing_or_not_yaml) {
  auto missing = kubeconfig_config(dir / "none");
  ASSERT_FALSE(missing);
  EXPECT_NE(describe(missing.error()).find(dir / "none"), std::string::npos);
  write_text(dir / "bad", "clusters: [unclosed\n");
  auto bad = kubeconfig_config(dir / "bad");
  ASSERT_FALSE(bad);
  EXPECT_NE(describe(bad.error()).find("not valid YAML"), std::string::npos) << describe(bad.error());
}
