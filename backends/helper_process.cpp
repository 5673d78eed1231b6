#include "backends/helper_process.hpp"

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <string_view>
#include <thread>

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "core/errors.hpp"

extern char** environ;

namespace berth {

namespace {

using clock = std::chrono::steady_clock;

/// Closes a file descriptor at scope exit.
struct fd_guard {
  int fd = -1;
  ~fd_guard() {
    if (fd >= 0) {
      ::close(fd);
    }
  }
};

/// Reads what is available on `fd` into `out`; false at EOF or error.
bool drain(int fd, std::string& out) {
  char buf[4096];
  for (;;) {
    ssize_t n = ::read(fd, buf, sizeof buf);
    if (n > 0) {
      out.append(buf, static_cast<size_t>(n));
      continue;
    }
    if (n < 0 && errno == EINTR) {
      continue;
    }
    return n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK);
  }
}

/// Reaps `pid`; if it does not die within a second (stuck in the kernel), a
/// detached thread reaps it later so no zombie is left.
void reap_after_kill(pid_t pid, int& status) {
  auto deadline = clock::now() + std::chrono::seconds(1);
  while (clock::now() < deadline) {
    if (::waitpid(pid, &status, WNOHANG) == pid) {
      return;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  std::thread([pid] {
    int st = 0;
    ::waitpid(pid, &st, 0);
  }).detach();
}

} // namespace

std::vector<std::string> path_directories() {
  std::vector<std::string> dirs;
  const char* path = std::getenv("PATH");
  if (path == nullptr) {
    return dirs;
  }
  std::string_view rest{path};
  for (;;) {
    auto colon = rest.find(':');
    dirs.emplace_back(rest.substr(0, colon));
    if (colon == std::string_view::npos) {
      return dirs;
    }
    rest.remove_prefix(colon + 1);
  }
}

std::string find_executable(const std::string& name, const std::vector<std::string>& dirs) {
  for (const auto& dir : dirs) {
    if (dir.empty()) {
      continue;
    }
    std::string candidate = dir + "/" + name;
    if (::access(candidate.c_str(), X_OK) == 0) {
      return candidate;
    }
  }
  return {};
}

std::string find_program(const std::string& program) {
  if (program.find('/') != std::string::npos) {
    return ::access(program.c_str(), X_OK) == 0 ? program : std::string{};
  }
  std::vector<std::string> dirs;
  if (std::getenv("PATH") == nullptr) {
    // What execvp searches without a PATH.
    dirs = {"/usr/local/sbin", "/usr/local/bin", "/usr/sbin", "/usr/bin", "/sbin", "/bin"};
  } else {
    dirs = path_directories();
    // execvp reads an empty entry as the current directory.
    std::replace(dirs.begin(), dirs.end(), std::string{}, std::string{"."});
  }
  return find_executable(program, dirs);
}

std::string render_command(const std::vector<std::string>& argv) {
  std::string out;
  for (const auto& a : argv) {
    if (!out.empty()) {
      out += ' ';
    }
    out += a;
  }
  return out;
}

caf::expected<helper_result> run_helper(const std::vector<std::string>& argv,
                                        std::chrono::milliseconds timeout) {
  if (argv.empty()) {
    return make_error(ec::internal, "run_helper: empty command");
  }
  // Positional arguments follow the last `--`; one beginning with '-' would still
  // be read as an option by a helper that a helper execs (mount.nfs), so none may.
  auto last_dashes = std::find(argv.rbegin(), argv.rend(), std::string{"--"});
  for (auto it = last_dashes.base(); last_dashes != argv.rend() && it != argv.end(); ++it) {
    if (!it->empty() && (*it)[0] == '-') {
      return make_error(ec::invalid_argument, "refusing to run `" + render_command(argv)
                                                + "`: the argument \"" + *it
                                                + "\" after `--` begins with '-'");
    }
  }
  int out_pipe[2];
  int err_pipe[2];
  if (::pipe2(out_pipe, O_CLOEXEC | O_NONBLOCK) != 0) {
    return make_error(ec::backend_failure, std::string("pipe: ") + std::strerror(errno));
  }
  fd_guard out_r{out_pipe[0]};
  fd_guard out_w{out_pipe[1]};
  if (::pipe2(err_pipe, O_CLOEXEC | O_NONBLOCK) != 0) {
    return make_error(ec::backend_failure, std::string("pipe: ") + std::strerror(errno));
  }
  fd_guard err_r{err_pipe[0]};
  fd_guard err_w{err_pipe[1]};

  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_adddup2(&actions, out_w.fd, 1);
  posix_spawn_file_actions_adddup2(&actions, err_w.fd, 2);
  posix_spawn_file_actions_addclosefrom_np(&actions, 3);
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  sigset_t no_signals;
  sigemptyset(&no_signals);
  sigset_t all_signals;
  sigfillset(&all_signals);
  posix_spawnattr_setsigmask(&attr, &no_signals);
  posix_spawnattr_setsigdefault(&attr, &all_signals);
  posix_spawnattr_setpgroup(&attr, 0);
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGMASK
                                    | POSIX_SPAWN_SETSIGDEF);

  // The helper dies with berthd: setpriv sets its parent-death signal, then execs it. A
  // berthd killed with SIGKILL otherwise leaves a mkfs or a mount running on, and the next
  // berthd could start a second one on the same volume (docs/design.md, "Backends and the
  // executor"). posix_spawn has no such attribute, so setpriv (util-linux) sets it.
  std::string program = find_program(argv[0]);
  if (program.empty()) {
    posix_spawn_file_actions_destroy(&actions);
    posix_spawnattr_destroy(&attr);
    return make_error(ec::backend_failure,
                      "cannot run " + argv[0] + ": " + std::strerror(ENOENT));
  }
  std::vector<std::string> wrapped{"setpriv", "--pdeathsig", "KILL", "--", program};
  wrapped.insert(wrapped.end(), argv.begin() + 1, argv.end());
  std::vector<char*> args;
  for (const auto& a : wrapped) {
    args.push_back(const_cast<char*>(a.c_str()));
  }
  args.push_back(nullptr);
  pid_t pid = -1;
  int rc = ::posix_spawnp(&pid, args[0], &actions, &attr, args.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attr);
  if (rc != 0) {
    return make_error(ec::backend_failure, "cannot run " + argv[0] + ": cannot run setpriv "
                                             "(util-linux): " + std::strerror(rc));
  }
  ::close(out_w.fd);
  out_w.fd = -1;
  ::close(err_w.fd);
  err_w.fd = -1;

  // Wait for the child itself (not for EOF: a daemon it forks may keep the pipes).
  fd_guard pidfd{static_cast<int>(::syscall(SYS_pidfd_open, pid, 0))};
  helper_result res;
  int status = 0;
  bool reaped = false;
  bool out_open = true;
  bool err_open = true;
  auto deadline = clock::now() + timeout;
  while (!reaped) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - clock::now());
    if (left.count() <= 0) {
      ::kill(-pid, SIGKILL);
      res.timed_out = true;
      reap_after_kill(pid, status);
      reaped = true;
      break;
    }
    pollfd fds[3];
    nfds_t n = 0;
    if (out_open) {
      fds[n++] = {out_r.fd, POLLIN, 0};
    }
    if (err_open) {
      fds[n++] = {err_r.fd, POLLIN, 0};
    }
    if (pidfd.fd >= 0) {
      fds[n++] = {pidfd.fd, POLLIN, 0};
    }
    int wait_ms = static_cast<int>(std::min<long long>(left.count(), pidfd.fd >= 0 ? 60000 : 10));
    ::poll(fds, n, wait_ms);
    if (out_open) {
      out_open = drain(out_r.fd, res.out);
    }
    if (err_open) {
      err_open = drain(err_r.fd, res.err);
    }
    if (::waitpid(pid, &status, WNOHANG) == pid) {
      reaped = true;
    }
  }
  if (out_open) {
    drain(out_r.fd, res.out);
  }
  if (err_open) {
    drain(err_r.fd, res.err);
  }
  if (!res.timed_out && WIFEXITED(status)) {
    res.exit_code = WEXITSTATUS(status);
  }
  return res;
}

caf::expected<std::string> run_helper_checked(const std::vector<std::string>& argv,
                                              std::chrono::milliseconds timeout,
                                              const std::string& what) {
  auto res = run_helper(argv, timeout);
  if (!res) {
    return make_error(ec::backend_failure, what + ": " + describe(res.error()));
  }
  if (res->timed_out) {
    return make_error(ec::timeout, what + ": `" + render_command(argv) + "` killed after "
                                     + std::to_string(timeout.count()) + " ms");
  }
  if (res->exit_code != 0) {
    std::string err = res->err.empty() ? res->out : res->err;
    while (!err.empty() && (err.back() == '\n' || err.back() == ' ')) {
      err.pop_back();
    }
    return make_error(ec::backend_failure,
                      what + ": `" + render_command(argv) + "` exited with "
                        + (res->exit_code < 0 ? std::string("a signal")
                                              : "status " + std::to_string(res->exit_code))
                        + (err.empty() ? std::string() : ": " + err));
  }
  return std::move(res->out);
}

} // namespace berth
