// Every flag of berthd (apps/berthd/daemon_options.cpp): its default, a good value, and
// a bad one refused with an error that names the flag and the value. --help lists each.
#include "apps/berthd/daemon_options.hpp"

#include <cstdlib>

#include <gtest/gtest.h>

#include "core/errors.hpp"

namespace berth {
namespace {

caf::expected<daemon_options> parse(std::vector<const char*> args) {
  args.insert(args.begin(), "berthd");
  return parse_daemon_options(static_cast<int>(args.size()), args.data());
}

/// The environment the CSI sidecars' fallbacks read, cleared for one test.
class daemon_flags : public testing::Test {
protected:
  void SetUp() override {
    ::unsetenv("CSI_ENDPOINT");
    ::unsetenv("NODE_ID");
  }
  void TearDown() override { SetUp(); }
};

TEST_F(daemon_flags, every_default) {
  auto o = parse({});
  ASSERT_TRUE(o) << describe(o.error());
  EXPECT_EQ(o->state_dir, "/var/lib/berth");
  EXPECT_EQ(o->block_dir, "");
  EXPECT_EQ(o->journal_reserve_mb, 32u);
  EXPECT_EQ(o->compact_after_mb, 64u);
  EXPECT_EQ(o->docker_socket, "/run/docker/plugins/berth.sock");
  EXPECT_EQ(o->admin_socket, "/run/berth/admin.sock");
  EXPECT_EQ(o->metrics_address, "127.0.0.1:9808");
  EXPECT_EQ(o->log_format, "text");
  EXPECT_EQ(o->log_level, "info");
  EXPECT_EQ(o->import_ecs_state, "");
  EXPECT_EQ(o->csi_endpoint, "");
  EXPECT_FALSE(o->node_id.empty()); // the hostname
  EXPECT_EQ(o->csi_driver_name, "berth.csi.dev");
  EXPECT_EQ(o->max_volumes_per_node, 0);
  EXPECT_EQ(o->csi_capabilities, "1.12");
  EXPECT_EQ(o->kubelet_dir, "/var/lib/kubelet");
  EXPECT_EQ(o->backend_timeout.count(), 30000);
  EXPECT_EQ(o->coalesce_window.count(), 2000);
  EXPECT_EQ(o->modify_cooldown.count(), 0);
  EXPECT_EQ(o->docker_api, "unix:///var/run/docker.sock");
  EXPECT_EQ(o->die_grace.count(), 10000);
  EXPECT_EQ(o->stop_timeout.count(), 30000);
  EXPECT_EQ(o->executor_threads, 16u);
  EXPECT_TRUE(o->test_stall_volumes.empty());
  EXPECT_EQ(o->test_stall.count(), 0);
  EXPECT_FALSE(o->help);
  EXPECT_FALSE(o->version);
}

TEST_F(daemon_flags, every_flag_takes_a_good_value) {
  auto o = parse({"--state-dir",
                  "/s",
                  "--block-dir=/b",
                  "--journal-reserve-mb",
                  "0",
                  "--compact-after-mb",
                  "8",
                  "--docker-socket",
                  "",
                  "--admin-socket=/a.sock",
                  "--metrics-address=",
                  "--log-format",
                  "json",
                  "--log-level",
                  "debug",
                  "--import-ecs-state",
                  "/e",
                  "--csi-endpoint",
                  "unix:///c.sock",
                  "--node-id",
                  "n1",
                  "--csi-driver-name",
                  "d.example",
                  "--max-volumes-per-node",
                  "7",
                  "--csi-capabilities",
                  "1.9",
                  "--kubelet-dir",
                  "/k",
                  "--backend-timeout-ms",
                  "5",
                  "--coalesce-window-ms",
                  "6",
                  "--modify-cooldown-ms",
                  "8",
                  "--docker-api",
                  "",
                  "--die-grace-ms",
                  "9",
                  "--stop-timeout-ms",
                  "10",
                  "--executor-threads",
                  "2",
                  "--test-stall-volume",
                  "a,b",
                  "--test-stall-ms",
                  "11"});
  ASSERT_TRUE(o) << describe(o.error());
  EXPECT_EQ(o->state_dir, "/s");
  EXPECT_EQ(o->block_dir, "/b");
  EXPECT_EQ(o->journal_reserve_mb, 0u);
  EXPECT_EQ(o->compact_after_mb, 8u);
  EXPECT_EQ(o->docker_socket, "");
  EXPECT_EQ(o->admin_socket, "/a.sock");
  EXPECT_EQ(o->metrics_address, "");
  EXPECT_EQ(o->log_format, "json");
  EXPECT_EQ(o->log_level, "debug");
  EXPECT_EQ(o->import_ecs_state, "/e");
  EXPECT_EQ(o->csi_endpoint, "unix:///c.sock");
  EXPECT_EQ(o->node_id, "n1");
  EXPECT_EQ(o->csi_driver_name, "d.example");
  EXPECT_EQ(o->max_volumes_per_node, 7);
  EXPECT_EQ(o->csi_capabilities, "1.9");
  EXPECT_EQ(o->kubelet_dir, "/k");
  EXPECT_EQ(o->backend_timeout.count(), 5);
  EXPECT_EQ(o->coalesce_window.count(), 6);
  EXPECT_EQ(o->modify_cooldown.count(), 8);
  EXPECT_EQ(o->docker_api, "");
  EXPECT_EQ(o->die_grace.count(), 9);
  EXPECT_EQ(o->stop_timeout.count(), 10);
  EXPECT_EQ(o->executor_threads, 2u);
  EXPECT_EQ(o->test_stall_volumes, (std::set<std::string>{"a", "b"}));
  EXPECT_EQ(o->test_stall.count(), 11);
  EXPECT_TRUE(parse({"--help"})->help);
  EXPECT_TRUE(parse({"-h"})->help);
  EXPECT_TRUE(parse({"--version"})->version);
}

TEST_F(daemon_flags, a_bad_value_is_refused_naming_the_flag_and_the_value) {
  struct bad {
    const char* flag;
    const char* value;
  };
  for (const auto& b : std::vector<bad>{{"--state-dir", "rel"},
                                        {"--block-dir", ""},
                                        {"--journal-reserve-mb", "65537"},
                                        {"--compact-after-mb", "0"},
                                        {"--compact-after-mb", "1048577"},
                                        {"--compact-after-mb", "8M"},
                                        {"--metrics-address", "9808"},
                                        {"--log-format", "xml"},
                                        {"--log-level", "loud"},
                                        {"--csi-endpoint", "tcp://x:1"},
                                        {"--node-id", ""},
                                        {"--csi-driver-name", ""},
                                        {"--max-volumes-per-node", "-1"},
                                        {"--csi-capabilities", "1.10"},
                                        {"--kubelet-dir", "/"},
                                        {"--backend-timeout-ms", "30s"},
                                        {"--coalesce-window-ms", "x"},
                                        {"--modify-cooldown-ms", "1e3"},
                                        {"--docker-api", "tcp://x:2375"},
                                        {"--die-grace-ms", "300001"},
                                        {"--stop-timeout-ms", "-5"},
                                        {"--executor-threads", "0"},
                                        {"--test-stall-ms", "1.5"}}) {
    auto o = parse({b.flag, b.value});
    ASSERT_FALSE(o) << b.flag << " accepted \"" << b.value << "\"";
    auto msg = describe(o.error());
    EXPECT_NE(msg.find(b.flag), std::string::npos) << msg;
    EXPECT_NE(msg.find(b.value), std::string::npos) << msg;
    EXPECT_NE(msg.find("(see berthd --help)"), std::string::npos) << msg;
  }
}

TEST_F(daemon_flags, a_flag_without_its_value_and_an_unknown_one_are_named) {
  auto o = parse({"--log-level"});
  ASSERT_FALSE(o);
  EXPECT_EQ(describe(o.error()).find("--log-level needs a value"), 0u) << describe(o.error());
  o = parse({"--bogus"});
  ASSERT_FALSE(o);
  EXPECT_EQ(describe(o.error()).find("unknown option \"--bogus\""), 0u) << describe(o.error());
  o = parse({"stray"});
  ASSERT_FALSE(o);
  EXPECT_EQ(describe(o.error()).find("unknown option \"stray\""), 0u) << describe(o.error());
}

TEST_F(daemon_flags, a_bad_value_is_refused_even_beside_help) {
  EXPECT_FALSE(parse({"--log-format", "xml", "--help"}));
  EXPECT_FALSE(parse({"--help", "--bogus"}));
}

TEST_F(daemon_flags, the_last_of_a_repeated_flag_wins) {
  auto o = parse({"--log-level", "warn", "--log-level=error"});
  ASSERT_TRUE(o) << describe(o.error());
  EXPECT_EQ(o->log_level, "error");
}

TEST_F(daemon_flags, csi_endpoint_and_node_id_fall_back_to_the_environment) {
  ::setenv("CSI_ENDPOINT", "unix:///env.sock", 1);
  ::setenv("NODE_ID", "env-node", 1);
  auto o = parse({});
  ASSERT_TRUE(o) << describe(o.error());
  EXPECT_EQ(o->csi_endpoint, "unix:///env.sock");
  EXPECT_EQ(o->node_id, "env-node");
  // A flag given, even empty, wins over the environment.
  o = parse({"--csi-endpoint=", "--node-id", "flag-node"});
  ASSERT_TRUE(o) << describe(o.error());
  EXPECT_EQ(o->csi_endpoint, "");
  EXPECT_EQ(o->node_id, "flag-node");
  ::setenv("CSI_ENDPOINT", "bad", 1);
  o = parse({});
  ASSERT_FALSE(o);
  EXPECT_EQ(describe(o.error()).find("CSI_ENDPOINT: --csi-endpoint must be"), 0u)
    << describe(o.error());
  ::unsetenv("CSI_ENDPOINT");
  ::setenv("NODE_ID", "", 1);
  o = parse({});
  ASSERT_FALSE(o);
  EXPECT_EQ(describe(o.error()).find("NODE_ID: --node-id must be"), 0u) << describe(o.error());
}

TEST_F(daemon_flags, help_lists_every_flag_it_parses) {
  auto help = daemon_usage();
  for (const char* flag :
       {"--state-dir DIR", "--block-dir DIR", "--journal-reserve-mb N", "--docker-socket PATH",
        "--admin-socket PATH", "--metrics-address HOST:PORT", "--log-format text|json",
        "--log-level LEVEL", "--import-ecs-state FILE", "--csi-endpoint unix:///PATH",
        "--node-id ID", "--csi-driver-name NAME", "--max-volumes-per-node N", "--kubelet-dir DIR",
        "--backend-timeout-ms N", "--coalesce-window-ms N", "--modify-cooldown-ms N",
        "--docker-api unix:///PATH", "--die-grace-ms N", "--stop-timeout-ms N",
        "--executor-threads N", "--test-stall-volume NAMES", "--test-stall-ms N", "-h,--help",
        "--version"}) {
    EXPECT_NE(help.find(std::string{"  "} + flag), std::string::npos) << flag << "\n" << help;
  }
  // Each default is on its flag's first line, where deploy checks read it.
  EXPECT_NE(help.find("--admin-socket PATH         berthctl socket; empty turns it off "
                      "(default /run/berth/admin.sock)"),
            std::string::npos)
    << help;
}

} // namespace
} // namespace berth
