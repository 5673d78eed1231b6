// berthd's options: --kubelet-dir and --modify-cooldown-ms (the others have no test yet).
#include "apps/daemon_options.hpp"

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

} // namespace
} // namespace berth
