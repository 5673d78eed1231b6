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

TEST(prestop_options, the_log_file_defaults_to_stderr_and_help_needs_no_node) {
  auto opts = parse({}, {{"NODE_NAME", "n2"}});
  ASSERT_TRUE(opts) << describe(opts.error());
  EXPECT_EQ(opts->log_file, "");
  EXPECT_FALSE(opts->help);
  for (const char* help : {"--help", "-h"}) {
    opts = parse({help});
    ASSERT_TRUE(opts) << describe(opts.error());
    EXPECT_TRUE(opts->help);
  }
}

TEST(prestop_options, every_flag_refuses_a_bad_value_naming_it_and_the_value) {
  for (const auto& [flag, value] : std::vector<std::pair<std::string, std::string>>{
         {"--node-name", ""},
         {"--driver-name", ""},
         {"--deadline-s", "86401"},
         {"--deadline-s", "-1"},
         {"--kubeconfig", ""},
         {"--admin-socket", ""},
         {"--log-file", ""}}) {
    auto opts = parse({"--node-name=n1", flag, value});
    ASSERT_FALSE(opts) << flag << " accepted \"" << value << "\"";
    auto msg = describe(opts.error());
    EXPECT_EQ(msg.find(flag), 0u) << msg;
    if (!value.empty()) {
      EXPECT_NE(msg.find("\"" + value + "\""), std::string::npos) << msg;
    }
  }
  // Every value is checked, even beside --help.
  EXPECT_FALSE(parse({"--deadline-s", "0", "--help"}));
  EXPECT_FALSE(parse({"--help", "--bogus"}));
}

TEST(prestop_options, help_lists_every_flag_with_its_default) {
  auto help = prestop_usage();
  for (const char* line :
       {"--node-name NAME      this node (default $CSI_NODE_NAME, else $NODE_NAME)",
        "--driver-name NAME    the CSI driver whose VolumeAttachments count (default "
        "berth.csi.dev)",
        "--deadline-s N", "(default 120)", "--kubeconfig FILE", "--log-file FILE",
        "--admin-socket PATH   berthd's admin socket (default /run/berth/admin.sock)",
        "--help"}) {
    EXPECT_NE(help.find(line), std::string::npos) << line << "\n" << help;
  }
}

TEST(prestop_options, run_help_exits_0) {
  testing::internal::CaptureStdout();
  int rc = run_prestop({"--help"}, nullptr);
  auto out = testing::internal::GetCapturedStdout();
  EXPECT_EQ(rc, 0);
  EXPECT_NE(out.find("Usage: berthd prestop"), std::string::npos) << out;
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
