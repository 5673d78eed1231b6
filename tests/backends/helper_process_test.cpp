#include "backends/helper_process.hpp"

#include <chrono>
#include <string>
#include <vector>

#include <unistd.h>

#include <gtest/gtest.h>

#include "core/errors.hpp"

using namespace std::chrono_literals;

namespace berth {
namespace {

TEST(helper_process, a_positional_argument_beginning_with_a_dash_is_refused_unrun) {
  char tmpl[] = "/tmp/berth-helper-XXXXXX";
  ASSERT_NE(::mkdtemp(tmpl), nullptr);
  std::string marker = std::string(tmpl) + "/ran";
  // After the last `--` every argument is positional: "-T" there is refused and
  // nothing runs (the touch would leave the marker).
  for (auto argv : std::vector<std::vector<std::string>>{
         {"touch", "--", "-T", marker},
         {"nsenter", "--net=/x", "--", "touch", "--", marker, "-T"}}) {
    auto res = run_helper(argv, 5s);
    ASSERT_FALSE(res);
    EXPECT_EQ(static_cast<ec>(res.error().code()), ec::invalid_argument);
    EXPECT_NE(describe(res.error()).find("\"-T\""), std::string::npos) << describe(res.error());
  }
  EXPECT_EQ(::access(marker.c_str(), F_OK), -1) << "the helper must not have run";
  // Options before `--` are fine.
  auto ok = run_helper({"touch", "-c", "--", marker}, 5s);
  ASSERT_TRUE(ok) << describe(ok.error());
  EXPECT_EQ(ok->exit_code, 0);
  ::rmdir(tmpl);
}

TEST(helper_process, captures_stdout_and_stderr) {
  auto res = run_helper({"sh", "-c", "echo out; echo err >&2; exit 3"}, 5s);
  ASSERT_TRUE(res) << describe(res.error());
  EXPECT_EQ(res->exit_code, 3);
  EXPECT_FALSE(res->timed_out);
  EXPECT_EQ(res->out, "out\n");
  EXPECT_EQ(res->err, "err\n");
}

TEST(helper_process, non_zero_exit_is_backend_failure_with_stderr) {
  auto res = run_helper_checked({"sh", "-c", "echo 'no such device' >&2; exit 32"}, 5s, "volume v1");
  ASSERT_FALSE(res);
  EXPECT_EQ(static_cast<ec>(res.error().code()), ec::backend_failure);
  auto msg = describe(res.error());
  EXPECT_NE(msg.find("volume v1"), std::string::npos) << msg;
  EXPECT_NE(msg.find("no such device"), std::string::npos) << msg;
  EXPECT_NE(msg.find("status 32"), std::string::npos) << msg;
}

TEST(helper_process, killed_after_timeout_with_its_children) {
  auto start = std::chrono::steady_clock::now();
  // The grandchild keeps the pipes open; the kill must reach the whole group.
  auto res = run_helper_checked({"sh", "-c", "sleep 30 & sleep 30"}, 300ms, "volume v2");
  auto took = std::chrono::steady_clock::now() - start;
  ASSERT_FALSE(res);
  EXPECT_EQ(static_cast<ec>(res.error().code()), ec::timeout);
  EXPECT_LT(took, 3s);
}

TEST(helper_process, does_not_wait_for_a_daemonized_grandchild) {
  auto start = std::chrono::steady_clock::now();
  auto res = run_helper_checked({"sh", "-c", "(sleep 3 &) ; echo done"}, 10s, "daemon");
  ASSERT_TRUE(res) << describe(res.error());
  EXPECT_LT(std::chrono::steady_clock::now() - start, 2s);
}

TEST(helper_process, missing_program_is_an_error) {
  auto res = run_helper({"/nonexistent/berth-helper"}, 1s);
  ASSERT_FALSE(res);
  EXPECT_NE(describe(res.error()).find("/nonexistent/berth-helper"), std::string::npos);
}

} // namespace
} // namespace berth
