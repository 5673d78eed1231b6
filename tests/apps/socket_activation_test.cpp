// berthd under systemd's socket activation: the passed sockets are found by the path they
// are bound to, kept from helpers, and served without ever removing their files.
// take_passed_sockets reads fds 3 and up, so those cases run in a forked child that puts
// the sockets there, as systemd would; the child's exit code is the number of failed checks.

#include "apps/berthd/socket_activation.hpp"

#include <fcntl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <functional>
#include <string>
#include <thread>

#include <boost/asio/io_context.hpp>
#include <boost/asio/executor_work_guard.hpp>
#include <gtest/gtest.h>

#include "core/errors.hpp"
#include "protocols/http/unix_http_client.hpp"
#include "protocols/http/unix_http_server.hpp"

using namespace berth;

namespace {

/// A unix stream socket bound to `path`, listening; -1 on failure.
int listening_socket(const std::string& path) {
  int fd = ::socket(AF_UNIX, SOCK_STREAM, 0);
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::snprintf(addr.sun_path, sizeof addr.sun_path, "%s", path.c_str());
  if (::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 || ::listen(fd, 8) != 0) {
    ::close(fd);
    return -1;
  }
  return fd;
}

class socket_activation : public ::testing::Test {
protected:
  void SetUp() override {
    char tmpl[] = "/tmp/berth-sockact-XXXXXX";
    ASSERT_NE(::mkdtemp(tmpl), nullptr);
    dir = tmpl;
  }
  void TearDown() override {
    std::filesystem::remove_all(dir);
  }

  /// Runs `checks` in a child whose fds 3.. are `fds` and whose LISTEN_* say so, as
  /// systemd starts a service; returns the child's exit code (its failed checks).
  int as_systemd_starts(const std::vector<int>& fds, const std::function<int()>& checks) {
    pid_t pid = ::fork();
    if (pid == 0) {
      // Out of the way of 3.., then into place.
      std::vector<int> high;
      for (int fd : fds) {
        high.push_back(::fcntl(fd, F_DUPFD, 100));
      }
      for (size_t i = 0; i < high.size(); ++i) {
        ::dup2(high[i], 3 + static_cast<int>(i));
        ::close(high[i]);
      }
      if (fds.empty()) { // systemd sets nothing then (LISTEN_FDS=0 is not valid)
        ::unsetenv("LISTEN_PID");
        ::unsetenv("LISTEN_FDS");
      } else {
        ::setenv("LISTEN_PID", std::to_string(::getpid()).c_str(), 1);
        ::setenv("LISTEN_FDS", std::to_string(fds.size()).c_str(), 1);
        ::setenv("LISTEN_FDNAMES", "whatever:names", 1);
      }
      std::fflush(stdout);
      ::_exit(checks());
    }
    int status = 0;
    ::waitpid(pid, &status, 0);
    return WIFEXITED(status) ? WEXITSTATUS(status) : 100 + WTERMSIG(status);
  }

  std::string dir;
};

/// Counts a failed check and says which.
int check(bool ok, const char* what) {
  if (!ok) {
    std::fprintf(stderr, "check failed: %s\n", what);
  }
  return ok ? 0 : 1;
}

} // namespace

TEST_F(socket_activation, passed_sockets_are_found_by_their_path_and_kept_from_helpers) {
  int docker = listening_socket(dir + "/docker.sock");
  int admin = listening_socket(dir + "/admin.sock");
  ASSERT_GE(docker, 0);
  ASSERT_GE(admin, 0);
  std::filesystem::create_symlink(dir + "/admin.sock", dir + "/admin-link.sock");
  int failed = as_systemd_starts({docker, admin}, [&] {
    auto passed = take_passed_sockets();
    if (!passed) {
      std::fprintf(stderr, "%s\n", describe(passed.error()).c_str());
      return 50;
    }
    int f = 0;
    f += check(std::getenv("LISTEN_FDS") == nullptr && std::getenv("LISTEN_PID") == nullptr &&
                 std::getenv("LISTEN_FDNAMES") == nullptr,
               "LISTEN_* unset, so no helper sees them");
    f += check((::fcntl(3, F_GETFD) & FD_CLOEXEC) != 0 && (::fcntl(4, F_GETFD) & FD_CLOEXEC) != 0,
               "close-on-exec");
    // The unit's order and names do not matter: the path does (or the same socket file).
    f += check(passed->claim(dir + "/admin-link.sock") == 4, "admin by its file");
    f += check(passed->claim(dir + "/admin.sock") == -1, "claimed once");
    f += check(passed->claim(dir + "/docker.sock") == 3, "docker by its path");
    f += check(!passed->check_all_claimed(), "all claimed");
    return f;
  });
  EXPECT_EQ(failed, 0);
}

TEST_F(socket_activation, a_passed_socket_no_flag_names_is_an_error_naming_its_path) {
  int stray = listening_socket(dir + "/other.sock");
  ASSERT_GE(stray, 0);
  int failed = as_systemd_starts({stray}, [&] {
    auto passed = take_passed_sockets();
    if (!passed) {
      return 50;
    }
    int f = check(passed->claim(dir + "/docker.sock") == -1, "nothing for docker.sock");
    auto err = passed->check_all_claimed();
    f += check(err == ec::invalid_argument, "an error");
    f += check(describe(err).find(dir + "/other.sock") != std::string::npos, "names the path");
    f += check(describe(err).find("ListenStream=") != std::string::npos, "says what to do");
    return f;
  });
  EXPECT_EQ(failed, 0);
}

TEST_F(socket_activation, a_passed_fd_that_is_no_listening_unix_socket_is_refused) {
  int pipe_fds[2];
  ASSERT_EQ(::pipe(pipe_fds), 0);
  int failed = as_systemd_starts({pipe_fds[0]}, [&] {
    auto passed = take_passed_sockets();
    int f = check(!passed, "refused");
    if (!passed) {
      f += check(describe(passed.error()).find("fd 3") != std::string::npos, "names the fd");
    }
    return f;
  });
  EXPECT_EQ(failed, 0);
  ::close(pipe_fds[0]);
  ::close(pipe_fds[1]);
}

TEST_F(socket_activation, none_passed_is_an_empty_set) {
  int failed = as_systemd_starts({}, [&] {
    auto passed = take_passed_sockets();
    if (!passed) {
      std::fprintf(stderr, "%s\n", describe(passed.error()).c_str());
      return 50;
    }
    return check(passed->empty(), "empty") + check(!passed->check_all_claimed(), "no error");
  });
  EXPECT_EQ(failed, 0);
}

// The server side: an adopted socket is served, and its file outlives the server, so a
// client never finds the path gone while berthd restarts.
TEST_F(socket_activation, an_adopted_socket_is_served_and_its_file_outlives_the_server) {
  auto path = dir + "/docker.sock";
  int fd = listening_socket(path);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(::chmod(path.c_str(), 0600), 0);
  boost::asio::io_context io;
  auto guard = boost::asio::make_work_guard(io);
  unix_http_server server{io,
                          [](const std::string&, const std::string& target, std::string,
                             reply_fn reply, const caller&) {
                            reply(200, "text/plain", "served " + target);
                          },
                          1 << 10, "docker"};
  ASSERT_FALSE(server.adopt(fd, path));
  std::thread runner{[&io] { io.run(); }};
  unix_http_client client{path};
  auto res = client.get("/Plugin.Activate");
  ASSERT_TRUE(res) << describe(res.error());
  EXPECT_EQ(res->body, "served /Plugin.Activate");
  server.stop();
  guard.reset();
  io.stop();
  runner.join();
  struct stat st {};
  ASSERT_EQ(::stat(path.c_str(), &st), 0) << "the passed socket's file was removed";
  EXPECT_EQ(st.st_mode & 0777, 0600u) << "its mode is the unit's, not berthd's";
}

TEST_F(socket_activation, a_socket_that_does_not_listen_is_not_adopted) {
  boost::asio::io_context io;
  unix_http_server server{io, [](auto&&...) {}, 1 << 10, "docker"};
  int fd = ::socket(AF_UNIX, SOCK_STREAM, 0);
  auto err = server.adopt(fd, dir + "/docker.sock");
  EXPECT_EQ(err, ec::invalid_argument);
  EXPECT_NE(describe(err).find("is not listening"), std::string::npos) << describe(err);
}
