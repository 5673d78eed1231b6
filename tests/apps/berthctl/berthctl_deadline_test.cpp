// berthctl against a berthd that accepts and never answers: every call ends at its
// deadline, says which socket did not answer and in how long, and exits non-zero.

#include <chrono>
#include <sstream>

#include <gtest/gtest.h>

#include "apps/berthctl/berthctl_cli.hpp"
#include "core/errors.hpp"
#include "tests/apps/berthctl/fake_admin.hpp"

using namespace berth;
using namespace berth::cli;
using namespace std::chrono_literals;

namespace {

TEST(berthctl_deadline, a_silent_berthd_ends_the_call_at_its_timeout) {
  test::fake_admin wedged;
  for (const char* cmd : {"status", "volumes"}) {
    std::ostringstream out;
    std::ostringstream err;
    auto start = std::chrono::steady_clock::now();
    EXPECT_EQ(run({"--socket", wedged.path(), "--timeout", "1", cmd}, out, err), exit_failure)
      << cmd;
    // Only a ceiling a stopped clock could break: it returned, which is the point.
    EXPECT_LT(std::chrono::steady_clock::now() - start, 60s) << cmd;
    EXPECT_NE(err.str().find(wedged.path()), std::string::npos) << err.str();
    EXPECT_NE(err.str().find("did not answer in 1 s"), std::string::npos) << err.str();
    EXPECT_TRUE(out.str().empty()) << out.str();
  }
  EXPECT_GE(wedged.accepted(), 1);
}

TEST(berthctl_deadline, the_timeout_is_ten_seconds_unless_given) {
  auto d = parse_args({"status"});
  ASSERT_TRUE(d);
  EXPECT_EQ(d->timeout, 10s);
  auto t = parse_args({"--timeout", "2.5", "volumes"});
  ASSERT_TRUE(t) << describe(t.error());
  EXPECT_EQ(t->timeout, 2500ms);
  for (const char* bad : {"0", "-1", "x", ""}) {
    auto r = parse_args({"--timeout", bad, "status"});
    ASSERT_FALSE(r) << bad;
    EXPECT_NE(describe(r.error()).find("--timeout"), std::string::npos) << describe(r.error());
  }
  std::ostringstream out;
  std::ostringstream err;
  EXPECT_EQ(run({"--timeout", "abc", "status"}, out, err), exit_usage);
}

} // namespace
