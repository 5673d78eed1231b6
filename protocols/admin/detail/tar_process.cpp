#include "protocols/admin/detail/tar_process.hpp"

#include <cerrno>
#include <csignal>
#include <cstring>
#include <string>
#include <vector>

#include <fcntl.h>
#include <spawn.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "core/errors.hpp"

extern char** environ;

namespace berth::admin::detail {

namespace {

caf::error spawn_failure(const std::string& step, int e) {
  return make_error(ec::internal, "cannot run tar: " + step + ": " + std::strerror(e));
}

/// The options both directions share: numeric owners (a volume's uids mean nothing by
/// name here), extended attributes of every namespace, and sparse files as sparse.
std::vector<std::string> tar_args(const std::string& mode, const std::string& dir) {
  std::vector<std::string> args{"setpriv", "--pdeathsig", "KILL", "--", "tar", mode,
                                "--file=-", "--directory=" + dir, "--numeric-owner",
                                "--xattrs", "--xattrs-include=*"};
  if (mode == "--create") {
    // Holes stay holes; a filesystem mounted inside is not the volume's.
    args.insert(args.end(), {"--sparse", "--one-file-system", "."});
  } else {
    // As root tar keeps owners and modes already; said here so that it never depends on
    // who runs berthd. Member names with "..", and links through symlinks that lead out,
    // tar refuses itself (exit status 2).
    args.insert(args.end(), {"--same-owner", "--preserve-permissions"});
  }
  return args;
}

} // namespace

caf::expected<tar_process> tar_process::create(const std::string& dir) {
  return spawn("--create", dir);
}

caf::expected<tar_process> tar_process::extract(const std::string& dir) {
  return spawn("--extract", dir);
}

caf::expected<tar_process> tar_process::spawn(const std::string& mode, const std::string& dir) {
  int data[2];
  if (::pipe2(data, O_CLOEXEC) != 0) {
    return spawn_failure("pipe", errno);
  }
  int errors = ::memfd_create("berth-tar-errors", MFD_CLOEXEC);
  if (errors < 0) {
    int e = errno;
    ::close(data[0]);
    ::close(data[1]);
    return spawn_failure("memfd_create", e);
  }
  const bool creating = mode == "--create";
  // berthd keeps the read end of a create's archive and the write end of an extract's.
  const int child_end = creating ? data[1] : data[0];
  const int own_end = creating ? data[0] : data[1];
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  if (creating) {
    posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_adddup2(&actions, child_end, 1);
  } else {
    posix_spawn_file_actions_adddup2(&actions, child_end, 0);
    posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0);
  }
  posix_spawn_file_actions_adddup2(&actions, errors, 2);
  posix_spawn_file_actions_addclosefrom_np(&actions, 3);
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  sigset_t none;
  sigemptyset(&none);
  sigset_t all;
  sigfillset(&all);
  posix_spawnattr_setsigmask(&attr, &none);
  posix_spawnattr_setsigdefault(&attr, &all);
  posix_spawnattr_setpgroup(&attr, 0);
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGMASK
                                    | POSIX_SPAWN_SETSIGDEF);
  auto argv = tar_args(mode, dir);
  std::vector<char*> args;
  for (auto& a : argv) {
    args.push_back(a.data());
  }
  args.push_back(nullptr);
  pid_t pid = -1;
  int rc = ::posix_spawnp(&pid, args[0], &actions, &attr, args.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attr);
  ::close(child_end);
  if (rc != 0) {
    ::close(own_end);
    ::close(errors);
    return spawn_failure("setpriv (util-linux)", rc);
  }
  return tar_process{pid, own_end, errors};
}

tar_process::tar_process(int pid, int data_fd, int errors_fd)
  : pid_(pid), data_fd_(data_fd), errors_fd_(errors_fd) {
}

tar_process::tar_process(tar_process&& other) noexcept
  : pid_(other.pid_.exchange(-1)), data_fd_(other.data_fd_), errors_fd_(other.errors_fd_) {
  other.data_fd_ = -1;
  other.errors_fd_ = -1;
}

tar_process::~tar_process() {
  if (pid_ > 0) {
    kill();
    wait();
  }
  close_data();
  if (errors_fd_ >= 0) {
    ::close(errors_fd_);
  }
}

void tar_process::close_data() {
  if (data_fd_ >= 0) {
    ::close(data_fd_);
    data_fd_ = -1;
  }
}

void tar_process::kill() {
  if (int pid = pid_.load(); pid > 0) {
    ::kill(-pid, SIGKILL);
  }
}

tar_result tar_process::wait() {
  close_data();
  tar_result out;
  const int pid = pid_.load();
  if (pid <= 0) {
    return out;
  }
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  pid_ = -1;
  out.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  char buf[4096];
  auto n = ::pread(errors_fd_, buf, sizeof buf, 0);
  if (n > 0) {
    out.errors.assign(buf, static_cast<size_t>(n));
    while (!out.errors.empty() && (out.errors.back() == '\n' || out.errors.back() == ' ')) {
      out.errors.pop_back();
    }
  }
  return out;
}

} // namespace berth::admin::detail
