// berthd's options: --kubelet-dir, --modify-cooldown-ms, --coalesce-window-ms,
// --metrics-address, --docker-api and --die-grace-ms in detail; every flag's default and
// refusal are in daemon_flags_test.cpp.
#include "apps/berthd/daemon_options.hpp"

#include <gtest/gtest.h>

#include "core/errors.hpp"

namespace berth {
namespace {

caf::expected<daemon_options> parse(std::vector<const char*> args) {
  args.insert(args.begin(), "berthd");
  return parse_daemon_options(static_cast<int>(args.size()), args.data());
}

TEST(daemon_options, kubelet_dir_defaults_to_var_lib_kubelet) {
  auto opts = parse({});
  ASSERT_TRUE(opts) << describe(opts.error());
  EXPECT_EQ(opts->kubelet_dir, "/var/lib/kubelet");
}

TEST(daemon_options, kubelet_dir_is_taken_in_both_spellings) {
  auto opts = parse({"--kubelet-dir", "/data/kubelet"});
  ASSERT_TRUE(opts) << describe(opts.error());
  EXPECT_EQ(opts->kubelet_dir, "/data/kubelet");
  opts = parse({"--kubelet-dir=/srv/k"});
  ASSERT_TRUE(opts) << describe(opts.error());
  EXPECT_EQ(opts->kubelet_dir, "/srv/k");
}

TEST(daemon_options, a_relative_empty_or_root_kubelet_dir_is_refused) {
  for (const char* bad : {"relative/k", "", "/"}) {
    auto opts = parse({"--kubelet-dir", bad});
    ASSERT_FALSE(opts) << "accepted \"" << bad << "\"";
    EXPECT_NE(describe(opts.error()).find("--kubelet-dir"), std::string::npos)
      << describe(opts.error());
  }
}

TEST(daemon_options, coalesce_window_defaults_to_two_seconds_and_zero_turns_it_off) {
  auto opts = parse({});
  ASSERT_TRUE(opts) << describe(opts.error());
  EXPECT_EQ(opts->coalesce_window.count(), 2000);
  opts = parse({"--coalesce-window-ms", "0"});
  ASSERT_TRUE(opts) << describe(opts.error());
  EXPECT_EQ(opts->coalesce_window.count(), 0);
  for (const char* bad : {"-5", "2s"}) {
    auto refused = parse({"--coalesce-window-ms", bad});
    ASSERT_FALSE(refused) << "accepted \"" << bad << "\"";
    EXPECT_NE(describe(refused.error()).find("--coalesce-window-ms"), std::string::npos)
      << describe(refused.error());
  }
}

TEST(daemon_options, modify_cooldown_defaults_to_none_and_takes_milliseconds) {
  auto opts = parse({});
  ASSERT_TRUE(opts) << describe(opts.error());
  EXPECT_EQ(opts->modify_cooldown.count(), 0);
  opts = parse({"--modify-cooldown-ms", "21600000"});
  ASSERT_TRUE(opts) << describe(opts.error());
  EXPECT_EQ(opts->modify_cooldown.count(), 21600000);
  opts = parse({"--modify-cooldown-ms=250"});
  ASSERT_TRUE(opts) << describe(opts.error());
  EXPECT_EQ(opts->modify_cooldown.count(), 250);
  for (const char* bad : {"-1", "", "6h"}) {
    auto refused = parse({"--modify-cooldown-ms", bad});
    ASSERT_FALSE(refused) << "accepted \"" << bad << "\"";
    EXPECT_NE(describe(refused.error()).find("--modify-cooldown-ms"), std::string::npos)
      << describe(refused.error());
  }
}

TEST(daemon_options, metrics_address_defaults_to_loopback_9808_and_empty_turns_it_off) {
  auto opts = parse({});
  ASSERT_TRUE(opts) << describe(opts.error());
  EXPECT_EQ(opts->metrics_address, "127.0.0.1:9808");
  opts = parse({"--metrics-address", ""});
  ASSERT_TRUE(opts) << describe(opts.error());
  EXPECT_EQ(opts->metrics_address, "");
  opts = parse({"--metrics-address=127.0.0.1:0"});
  ASSERT_TRUE(opts) << describe(opts.error());
  EXPECT_EQ(opts->metrics_address, "127.0.0.1:0");
  opts = parse({"--metrics-address", "[::1]:9100"});
  ASSERT_TRUE(opts) << describe(opts.error());
  EXPECT_EQ(opts->metrics_address, "[::1]:9100");
}

TEST(daemon_options, a_metrics_address_that_does_not_parse_is_refused_naming_it) {
  for (const char* bad : {"9808", "localhost", "127.0.0.1:70000", "::1:9808"}) {
    auto opts = parse({"--metrics-address", bad});
    ASSERT_FALSE(opts) << "accepted \"" << bad << "\"";
    auto msg = describe(opts.error());
    EXPECT_NE(msg.find("--metrics-address"), std::string::npos) << msg;
    EXPECT_NE(msg.find(bad), std::string::npos) << msg;
  }
}

TEST(daemon_options, docker_api_defaults_to_dockerds_socket_and_empty_turns_it_off) {
  auto opts = parse({});
  ASSERT_TRUE(opts) << describe(opts.error());
  EXPECT_EQ(opts->docker_api, "unix:///var/run/docker.sock");
  opts = parse({"--docker-api", ""});
  ASSERT_TRUE(opts) << describe(opts.error());
  EXPECT_EQ(opts->docker_api, "");
  opts = parse({"--docker-api=unix:///tmp/d/docker.sock"});
  ASSERT_TRUE(opts) << describe(opts.error());
  EXPECT_EQ(opts->docker_api, "unix:///tmp/d/docker.sock");
}

TEST(daemon_options, a_docker_api_other_than_unix_absolute_is_a_start_error_naming_it) {
  for (const char* bad : {"tcp://127.0.0.1:2375", "/var/run/docker.sock", "unix://relative.sock",
                          "unix://", "http://localhost"}) {
    auto opts = parse({"--docker-api", bad});
    ASSERT_FALSE(opts) << "accepted \"" << bad << "\"";
    auto msg = describe(opts.error());
    EXPECT_NE(msg.find("--docker-api"), std::string::npos) << msg;
    EXPECT_NE(msg.find(bad), std::string::npos) << msg;
  }
}

TEST(daemon_options, die_grace_defaults_to_ten_seconds_and_is_bounded) {
  auto opts = parse({});
  ASSERT_TRUE(opts) << describe(opts.error());
  EXPECT_EQ(opts->die_grace.count(), 10000);
  opts = parse({"--die-grace-ms", "0"});
  ASSERT_TRUE(opts) << describe(opts.error());
  EXPECT_EQ(opts->die_grace.count(), 0);
  opts = parse({"--die-grace-ms", "300000"});
  ASSERT_TRUE(opts) << describe(opts.error());
  EXPECT_EQ(opts->die_grace.count(), 300000);
  for (const char* bad : {"300001", "-1", "10s", ""}) {
    auto refused = parse({"--die-grace-ms", bad});
    ASSERT_FALSE(refused) << "accepted \"" << bad << "\"";
    auto msg = describe(refused.error());
    EXPECT_NE(msg.find("--die-grace-ms"), std::string::npos) << msg;
  }
}

} // namespace
} // namespace berth
