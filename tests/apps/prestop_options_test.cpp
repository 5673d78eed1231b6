// berthd prestop's command line (apps/prestop_command): defaults, the environment,
// and usage errors that exit 2 naming the bad option.
#include "apps/berthd/prestop_command.hpp"

#include <map>

#include <gtest/gtest.h>

#include "core/errors.hpp"

namespace berth {
namespace {

caf::expected<prestop_options> parse(std::vector<std::string> args,
                                     std::map<std::string, std::string> env = {}) {
  return parse_prestop_options(args, [env](const char* var) -> const char* {
    auto it = env.find(var);
    return it == env.end() ? nullptr : it->second.c_str();
  });
}

TEST(prestop_options, defaults_and_the_node_name_from_the_environment) {
  auto opts = parse({}, {{"NODE_NAME", "n2"}});
  ASSERT_TRUE(opts) << describe(opts.error());
  EXPECT_EQ(opts->node_name, "n2");
  EXPECT_EQ(opts->driver_name, "berth.csi.dev");
  EXPECT_EQ(opts->deadline_s, 120);
  EXPECT_EQ(opts->kubeconfig, "");
  EXPECT_EQ(opts->admin_socket, "/run/berth/admin.sock");
  opts = parse({}, {{"NODE_NAME", "n2"}, {"CSI_NODE_NAME", "n3"}});
  ASSERT_TRUE(opts);
  EXPECT_EQ(opts->node_name, "n3");
  opts = parse({"--node-name", "n4"}, {{"CSI_NODE_NAME", "n3"}});
  ASSERT_TRUE(opts);
  EXPECT_EQ(opts->node_name, "n4");
}

TEST(prestop_options, every_option_in_both_spellings) {
  auto opts = parse({"--node-name=n1", "--driver-name", "d.example", "--deadline-s=30",
                     "--kubeconfig", "/etc/kube.conf", "--admin-socket=/tmp/a.sock",
                     "--log-file", "/proc/1/fd/2"});
  ASSERT_TRUE(opts) << describe(opts.error());
  EXPECT_EQ(opts->node_name, "n1");
  EXPECT_EQ(opts->driver_name, "d.example");
  EXPECT_EQ(opts->deadline_s, 30);
  EXPECT_EQ(opts->kubeconfig, "/etc/kube.conf");
  EXPECT_EQ(opts->admin_socket, "/tmp/a.sock");
  EXPECT_EQ(opts->log_file, "/proc/1/fd/2");
}

TEST(prestop_options, bad_usage_names_the_option) {
  struct bad {
    std::vector<std::string> args;
    std::string named;
  };
  for (const auto& b : std::vector<bad>{{{"--node-name", "n1", "--bogus"}, "--bogus"},
                                        {{"--node-name", "n1", "--deadline-s", "0"}, "--deadline-s"},
                                        {{"--node-name", "n1", "--deadline-s", "2m"}, "--deadline-s"},
                                        {{"--node-name", "n1", "--deadline-s"}, "--deadline-s"},
                                        {{"--node-name="}, "--node-name"},
                                        {{}, "--node-name"}}) {
    auto opts = parse(b.args);
    ASSERT_FALSE(opts) << b.named;
    EXPECT_NE(describe(opts.error()).find(b.named), std::string::npos) << describe(opts.error());
  }
}

TEST(prestop_options, run_exits_2_with_the_message_and_the_usage) {
  testing::internal::CaptureStderr();
  int rc = run_prestop({"--node-name", "n1", "--deadline-s", "-5"}, nullptr);
  auto err = testing::internal::GetCapturedStderr();
  EXPECT_EQ(rc, 2);
  EXPECT_NE(err.find("--deadline-s expects a number of seconds"), std::string::npos) << err;
  EXPECT_NE(err.find("Usage: berthd prestop"), std::string::npos) << err;
}

TEST(prestop_options, run_with_a_client_that_cannot_be_set_up_exits_0) {
  kube_factory broken = [](const std::string& file)
    -> caf::expected<std::unique_ptr<kube::kube_api>> {
    return make_error(ec::invalid_argument, file + ": no such file");
  };
  EXPECT_EQ(run_prestop({"--node-name", "n1", "--kubeconfig", "/nope"}, broken), 0);
}

} // namespace
} // namespace berth
