#include "backends/helper_process.hpp"

#include <chrono>
#include <string>
#include <vector>

#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fstream>
#include <thread>

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

/// In a forked supervisor (a subreaper, so the helper is reparented to it): a child runs a
/// helper that writes its pid and sleeps; the child is SIGKILLed, as berthd can be. Exit 0
/// when the helper then died of SIGKILL, 3 when it was still running 10 s later, 2 when it
/// never started, 4 when it ended otherwise.
int helper_outlives_a_killed_parent_check(const std::string& pid_file) {
  ::prctl(PR_SET_CHILD_SUBREAPER, 1);
  pid_t parent = ::fork();
  if (parent == 0) {
    (void)run_helper({"sh", "-c", "echo $$ > " + pid_file + "; exec sleep 60"}, 120s);
    ::_exit(0);
  }
  pid_t helper = 0;
  for (int i = 0; i < 1000 && helper == 0; ++i) {
    std::ifstream in{pid_file};
    in >> helper;
    std::this_thread::sleep_for(10ms);
  }
  ::kill(parent, SIGKILL);
  ::waitpid(parent, nullptr, 0);
  if (helper <= 0) {
    return 2;
  }
  for (int i = 0; i < 1000; ++i) {
    int status = 0;
    if (::waitpid(helper, &status, WNOHANG) == helper) {
      return WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL ? 0 : 4;
    }
    std::this_thread::sleep_for(10ms);
  }
  ::kill(helper, SIGKILL);
  return 3;
}

// A berthd killed with SIGKILL must leave no helper running (a mkfs that would go on beside
// the next berthd's). The helper is sh then sleep (exec keeps the signal).
TEST(helper_process, a_helper_dies_with_the_process_that_ran_it) {
  char tmpl[] = "/tmp/berth-helper-XXXXXX";
  ASSERT_NE(::mkdtemp(tmpl), nullptr);
  std::string pid_file = std::string(tmpl) + "/pid";
  pid_t supervisor = ::fork();
  ASSERT_GE(supervisor, 0);
  if (supervisor == 0) {
    ::_exit(helper_outlives_a_killed_parent_check(pid_file));
  }
  int status = 0;
  ASSERT_EQ(::waitpid(supervisor, &status, 0), supervisor);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0)
    << "2: the helper never started; 3: it was still running 10 s after its parent was "
       "killed; 4: it ended, but not by SIGKILL";
  ::unlink(pid_file.c_str());
  ::rmdir(tmpl);
}

} // namespace
} // namespace berth
