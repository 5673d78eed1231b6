#include "core/proc_stat.hpp"

#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <sys/prctl.h>
#include <unistd.h>

#include <climits>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "core/errors.hpp"

using namespace berth;

namespace {

std::string self_stat_line() {
  std::ifstream in{"/proc/self/stat"};
  std::string line;
  std::getline(in, line);
  return line;
}

} // namespace

TEST(proc_stat, parses_the_start_time_after_the_last_parenthesis) {
  auto ticks = parse_stat_start_ticks(
    "77 (a b) c)) R 1 77 77 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 424242 0 0");
  ASSERT_TRUE(ticks) << describe(ticks.error());
  EXPECT_EQ(*ticks, 424242u);
  EXPECT_EQ(parse_stat_command("77 (a b) c)) R 1"), "a b) c)");
  EXPECT_FALSE(parse_stat_start_ticks("12 (x) S 1 2 3"));
}

TEST(proc_stat, splits_the_fields_after_the_command_name) {
  auto fields = parse_stat_fields("77 (a b) c)) R 1 77  77\n");
  ASSERT_TRUE(fields) << describe(fields.error());
  EXPECT_EQ(*fields, (std::vector<std::string>{"R", "1", "77", "77"}));
  auto none = parse_stat_fields("77 (x)");
  ASSERT_TRUE(none);
  EXPECT_TRUE(none->empty());
  EXPECT_FALSE(parse_stat_fields("77 x R 1"));
}

TEST(proc_stat, names_the_missing_start_time) {
  auto short_line = parse_stat_start_ticks("12 (x) S 1 2 3");
  ASSERT_FALSE(short_line);
  EXPECT_EQ(describe(short_line.error()), "/proc/PID/stat: only 6 fields, starttime is field 22");
  auto no_paren = parse_stat_start_ticks("12 x S");
  ASSERT_FALSE(no_paren);
  EXPECT_EQ(describe(no_paren.error()), "/proc/PID/stat: no ')' after the command name");
}

TEST(proc_stat, reads_this_process) {
  auto me = read_process_stat(::getpid());
  ASSERT_TRUE(me.known());
  EXPECT_EQ(me.pid, ::getpid());
  auto line = self_stat_line();
  EXPECT_EQ(me.start_ticks, parse_stat_start_ticks(line).value());
  EXPECT_EQ(me.command, parse_stat_command(line));
}

TEST(proc_stat, a_pid_that_names_no_process_is_unknown) {
  EXPECT_FALSE(read_process_stat(0).known());
  EXPECT_FALSE(read_process_stat(-1).known());
  EXPECT_FALSE(read_process_stat(INT_MAX).known()) << "above any pid_max";
}

TEST(proc_stat, the_peer_of_a_socket_pair_is_this_process) {
  int fds[2];
  ASSERT_EQ(::socketpair(AF_UNIX, SOCK_STREAM, 0, fds), 0);
  auto peer = socket_peer(fds[0]);
  ::close(fds[0]);
  ::close(fds[1]);
  ASSERT_TRUE(peer.known());
  EXPECT_EQ(peer.pid, ::getpid());
  EXPECT_EQ(peer.start_ticks, read_process_stat(::getpid()).start_ticks);
}

TEST(proc_stat, a_descriptor_that_is_no_unix_socket_has_no_peer) {
  int fds[2];
  ASSERT_EQ(::pipe(fds), 0);
  EXPECT_FALSE(socket_peer(fds[0]).known());
  ::close(fds[0]);
  ::close(fds[1]);
  EXPECT_FALSE(socket_peer(-1).known());
}

TEST(proc_stat, the_peer_of_an_accepted_connection_is_the_process_that_connected) {
  // What the plugin socket sees: berthd listens, dockerd connects. The client here is a
  // child that names itself "dockerd" (prctl), so the command is the child's, not ours.
  char dir[] = "/tmp/berth-proc-stat-XXXXXX";
  ASSERT_NE(::mkdtemp(dir), nullptr);
  std::string path = std::string{dir} + "/s.sock";
  int lfd = ::socket(AF_UNIX, SOCK_STREAM, 0);
  ASSERT_GE(lfd, 0);
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::strncpy(addr.sun_path, path.c_str(), sizeof addr.sun_path - 1);
  ASSERT_EQ(::bind(lfd, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
  ASSERT_EQ(::listen(lfd, 1), 0);
  int hold[2]; // the child stays until the parent has read its peer
  ASSERT_EQ(::pipe(hold), 0);
  pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    // Only async-signal-safe calls after fork in a threaded test binary.
    ::prctl(PR_SET_NAME, "dockerd", 0, 0, 0);
    int c = ::socket(AF_UNIX, SOCK_STREAM, 0);
    if (c < 0 || ::connect(c, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
      ::_exit(2);
    }
    char byte;
    ::close(hold[1]);
    (void)!::read(hold[0], &byte, 1);
    ::_exit(0);
  }
  ::close(hold[0]);
  int afd = ::accept(lfd, nullptr, nullptr);
  ASSERT_GE(afd, 0);
  auto peer = socket_peer(afd);
  auto direct = read_process_stat(child);
  ::close(hold[1]);
  int status = 0;
  ::waitpid(child, &status, 0);
  ::close(afd);
  ::close(lfd);
  ::unlink(path.c_str());
  ::rmdir(dir);
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "the child could not connect";
  ASSERT_TRUE(peer.known());
  EXPECT_EQ(peer.pid, child);
  EXPECT_EQ(peer.command, "dockerd");
  EXPECT_EQ(peer.start_ticks, direct.start_ticks);
}
