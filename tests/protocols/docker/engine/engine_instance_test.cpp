#include "protocols/docker/engine/engine_instance.hpp"

#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <csignal>
#include <unistd.h>

#include <fcntl.h>

#include <fstream>

#include <gtest/gtest.h>

#include "core/errors.hpp"

using namespace berth;
using namespace berth::docker_engine;

TEST(docker_engine_instance, start_ticks_from_proc_stat) {
  // A line in the shape of dockerd's /proc/PID/stat: starttime (field 22) is 58716.
  auto ticks = parse_stat_start_ticks(
    "12594 (dockerd) S 12593 12593 11857 0 -1 4194560 11893 0 1 0 43 24 0 0 20 0 19 0 58716 "
    "1947054080 20262 18446744073709551615 1 1 0 0 0 0 1006254592 0 2143420159 0 0 0 17 1 0 0 0 0 0");
  ASSERT_TRUE(ticks) << describe(ticks.error());
  EXPECT_EQ(*ticks, 58716u);
  EXPECT_EQ(parse_stat_command("12594 (dockerd) S 1"), "dockerd");
}

TEST(docker_engine_instance, command_names_with_spaces_and_parentheses) {
  auto ticks = parse_stat_start_ticks(
    "77 (a b) c)) R 1 77 77 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 424242 0 0");
  ASSERT_TRUE(ticks) << describe(ticks.error());
  EXPECT_EQ(*ticks, 424242u);
  EXPECT_EQ(parse_stat_command("77 (a b) c)) R 1"), "a b) c)");
  EXPECT_EQ(parse_stat_command("no parenthesis"), "");
}

TEST(docker_engine_instance, short_or_garbled_lines_are_refused) {
  EXPECT_FALSE(parse_stat_start_ticks("12 (x) S 1 2 3"));
  EXPECT_FALSE(parse_stat_start_ticks("no parenthesis here"));
  EXPECT_FALSE(parse_stat_start_ticks("1 (x) S 1 1 1 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 12z 0"));
}

TEST(docker_engine_instance, the_peer_of_a_socket_is_this_process_with_its_start_time) {
  int fds[2];
  ASSERT_EQ(socketpair(AF_UNIX, SOCK_STREAM, 0, fds), 0);
  auto who = peer_instance(fds[0]);
  close(fds[0]);
  close(fds[1]);
  ASSERT_TRUE(who.known());
  EXPECT_EQ(who.pid, getpid());
  std::ifstream in{"/proc/self/stat"};
  std::string line;
  std::getline(in, line);
  EXPECT_EQ(who.start_ticks, parse_stat_start_ticks(line).value());
  // The test binary is not dockerd: describe says so (as it does for systemd under socket activation).
  EXPECT_FALSE(who.is_dockerd());
  EXPECT_EQ(who.command, parse_stat_command(line));
  EXPECT_NE(who.describe().find("pid " + std::to_string(getpid()) + " " + who.command + ", not dockerd"),
            std::string::npos)
    << who.describe();
  auto dockerd = engine_instance{12594, 58716, "dockerd"};
  EXPECT_EQ(dockerd.describe(), "dockerd pid 12594 (started 58716 ticks after boot)");
}

TEST(docker_engine_instance, the_peer_socket_and_its_holder_are_found) {
  int fds[2];
  ASSERT_EQ(socketpair(AF_UNIX, SOCK_STREAM, 0, fds), 0);
  struct stat other{};
  ASSERT_EQ(fstat(fds[1], &other), 0);
  auto peer = peer_socket_inode(fds[0]);
  if (peer == 0) {
    close(fds[0]);
    close(fds[1]);
    GTEST_SKIP() << "the kernel answers no sock_diag UNIX_DIAG_PEER (CONFIG_UNIX_DIAG off?)";
  }
  EXPECT_EQ(peer, other.st_ino);
  // A child holds the other end (this process is left out of the search, as dockerd is
  // never berthd).
  pid_t child = fork();
  if (child == 0) {
    close(fds[0]);
    pause();
    _exit(0);
  }
  close(fds[1]);
  int found = 0;
  for (int i = 0; i < 100 && found != child; ++i) {
    found = holder_of_socket(peer);
    if (found != child) {
      usleep(10000);
    }
  }
  EXPECT_EQ(found, child);
  kill(child, SIGKILL);
  waitpid(child, nullptr, 0);
  close(fds[0]);
  EXPECT_EQ(holder_of_socket(0), 0);
}

TEST(docker_engine_instance, not_a_socket_is_unknown) {
  int fd = ::open("/dev/null", O_RDONLY);
  auto who = peer_instance(fd);
  close(fd);
  EXPECT_FALSE(who.known());
  EXPECT_EQ(who.describe(), "an unknown dockerd instance");
  EXPECT_NE(who, (engine_instance{1, 2, "dockerd"}));
}
