#include "tests/csi/berthd_process.hpp"

#include <array>
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <filesystem>
#include <fstream>
#include <thread>

#include <fcntl.h>
#include <libgen.h>
#include <poll.h>
#include <sys/inotify.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tests/csi/host_probe.hpp"

#ifndef BERTH_BERTHD_PATH
#define BERTH_BERTHD_PATH ""
#endif

namespace berth::csi_test {

namespace {

constexpr const char* temp_prefix = "berth-csi-";

bool socket_accepts(const std::string& path) {
  int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) {
    return false;
  }
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::strncpy(addr.sun_path, path.c_str(), sizeof(addr.sun_path) - 1);
  bool ok = ::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0;
  ::close(fd);
  return ok;
}

bool executable(const std::string& path) {
  return !path.empty() && ::access(path.c_str(), X_OK) == 0;
}

bool on_path(const char* cmd) {
  for (const char* dir : {"/usr/sbin", "/sbin", "/usr/bin", "/bin", "/usr/local/sbin"}) {
    if (executable(std::string(dir) + "/" + cmd)) {
      return true;
    }
  }
  return false;
}

} // namespace

berthd_process::berthd_process() {
  std::string tmpl = "/tmp/" + std::string(temp_prefix) + std::to_string(::getpid()) + "-XXXXXX";
  std::vector<char> buf(tmpl.begin(), tmpl.end());
  buf.push_back('\0');
  if (::mkdtemp(buf.data()) != nullptr) {
    root_ = buf.data();
    ::chmod(root_.c_str(), 0711);
  }
}

berthd_process::~berthd_process() {
  kill9();
  if (!root_.empty()) {
    if (std::getenv("BERTH_CSI_KEEP") != nullptr) {
      std::fprintf(stderr, "BERTH_CSI_KEEP set: cleaning mounts but leaving %s\n", root_.c_str());
      clean_under(root_);
      return;
    }
    auto problems = clean_and_remove(root_);
    if (!problems.empty()) {
      std::fprintf(stderr, "csi test clean-up of %s: %s\n", root_.c_str(), problems.c_str());
    }
  }
}

std::string berthd_process::binary() {
  if (const char* env = std::getenv("BERTHD"); env != nullptr && *env != '\0') {
    return env;
  }
  return BERTH_BERTHD_PATH;
}

std::string berthd_process::missing_prerequisite() {
  if (::geteuid() != 0) {
    return "needs root (it makes mounts and attaches loop devices); run it as root";
  }
  if (!executable(binary())) {
    return "berthd not found or not executable at '" + binary() +
           "' (build the berthd target, or set BERTHD=/path/to/berthd)";
  }
  if (::access("/dev/loop-control", R_OK | W_OK) != 0) {
    return "needs /dev/loop-control (loop devices) for the block backend";
  }
  if (!on_path("mkfs.xfs")) {
    return "needs mkfs.xfs (Debian package xfsprogs): apt-get install xfsprogs";
  }
  if (!on_path("mkfs.ext4")) {
    return "needs mkfs.ext4 (Debian package e2fsprogs): apt-get install e2fsprogs";
  }
  return "";
}

void berthd_process::clean_stale_runs() {
  std::error_code err;
  for (auto& entry : std::filesystem::directory_iterator("/tmp", err)) {
    auto name = entry.path().filename().string();
    if (name.compare(0, std::strlen(temp_prefix), temp_prefix) != 0) {
      continue;
    }
    auto pid = std::strtol(name.c_str() + std::strlen(temp_prefix), nullptr, 10);
    if (pid <= 0 || pid == ::getpid() || ::kill(static_cast<pid_t>(pid), 0) == 0 || errno != ESRCH) {
      continue;
    }
    auto problems = clean_and_remove(entry.path().string());
    std::fprintf(stderr, "csi test: removed %s left by an earlier run (pid %ld)%s%s\n",
                 entry.path().c_str(), pid, problems.empty() ? "" : ": ", problems.c_str());
  }
}

std::string berthd_process::start() {
  if (root_.empty()) {
    return "no temp dir (mkdtemp failed)";
  }
  if (running()) {
    return "berthd is already running (pid " + std::to_string(pid_) + ")";
  }
  std::error_code made;
  std::filesystem::create_directories(kubelet_dir(), made);
  if (made) {
    return "cannot create " + kubelet_dir() + ": " + made.message();
  }
  std::vector<std::string> args = {binary(),
                                   "--state-dir",
                                   state_dir(),
                                   "--docker-socket",
                                   state_dir() + "/docker.sock",
                                   "--admin-socket",
                                   state_dir() + "/admin.sock",
                                   "--csi-endpoint",
                                   endpoint(),
                                   "--node-id",
                                   node_id,
                                   "--kubelet-dir",
                                   kubelet_dir(),
                                   // Tests run in parallel: never the fixed default port.
                                   "--metrics-address",
                                   "127.0.0.1:0"};
  args.insert(args.end(), extra_args.begin(), extra_args.end());
  std::vector<char*> argv;
  std::string line = "==== start:";
  for (auto& a : args) {
    argv.push_back(a.data());
    line += " " + a;
  }
  argv.push_back(nullptr);
  int log = ::open(log_path().c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (log < 0) {
    return "cannot open " + log_path() + ": " + std::strerror(errno);
  }
  line += "\n";
  (void)!::write(log, line.data(), line.size());
  int devnull = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
  pid_t parent = ::getpid();
  pid_t pid = ::fork();
  if (pid < 0) {
    ::close(log);
    ::close(devnull);
    return std::string("fork: ") + std::strerror(errno);
  }
  if (pid == 0) {
    // Only async-signal-safe calls until exec. berthd dies with the test.
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (::getppid() != parent) {
      ::_exit(127);
    }
    ::dup2(devnull, 0);
    ::dup2(log, 1);
    ::dup2(log, 2);
    ::execv(argv[0], argv.data());
    ::_exit(127);
  }
  ::close(log);
  ::close(devnull);
  pid_ = pid;
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (!socket_accepts(csi_socket())) {
    int status = 0;
    if (::waitpid(pid_, &status, WNOHANG) == pid_) {
      pid_ = -1;
      return "berthd exited during start (status " + std::to_string(status) + "); log:\n" +
             log_tail();
    }
    if (std::chrono::steady_clock::now() > deadline) {
      kill9();
      return "berthd did not accept connections on " + csi_socket() + " within 30 s; log:\n" +
             log_tail();
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return "";
}

int berthd_process::stop(std::chrono::seconds limit) {
  if (!running()) {
    return 0;
  }
  ::kill(pid_, SIGTERM);
  auto deadline = std::chrono::steady_clock::now() + limit;
  for (;;) {
    int status = 0;
    pid_t r = ::waitpid(pid_, &status, WNOHANG);
    if (r == pid_) {
      pid_ = -1;
      if (WIFEXITED(status)) {
        return WEXITSTATUS(status);
      }
      return WIFSIGNALED(status) ? 128 + WTERMSIG(status) : -1;
    }
    if (r < 0 && errno != EINTR) {
      pid_ = -1;
      return -1;
    }
    if (std::chrono::steady_clock::now() > deadline) {
      kill9();
      return -1;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
}

void berthd_process::kill9() {
  if (!running()) {
    return;
  }
  ::kill(pid_, SIGKILL);
  int status = 0;
  while (::waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
  }
  pid_ = -1;
}

bool berthd_process::exited() {
  if (!running()) {
    return true;
  }
  int status = 0;
  if (::waitpid(pid_, &status, WNOHANG) != pid_) {
    return false;
  }
  pid_ = -1;
  return true;
}

std::pair<int, std::string> berthd_process::berthctl(const std::string& args) const {
  std::string dir = binary();
  dir = ::dirname(dir.data());
  auto cmd = dir + "/berthctl --socket " + state_dir() + "/admin.sock " + args + " 2>&1";
  std::string text;
  int status = -1;
  if (auto* p = ::popen(cmd.c_str(), "r")) {
    std::array<char, 4096> buf{};
    while (auto n = std::fread(buf.data(), 1, buf.size(), p)) {
      text.append(buf.data(), n);
    }
    status = ::pclose(p);
  }
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, text};
}

std::string berthd_process::log_tail(size_t lines) const {
  std::ifstream in(log_path());
  std::deque<std::string> last;
  std::string line;
  while (std::getline(in, line)) {
    last.push_back(line);
    if (last.size() > lines) {
      last.pop_front();
    }
  }
  std::string out;
  for (auto& l : last) {
    out += "  | " + l + "\n";
  }
  return out;
}

bool berthd_process::wait_for_log(const std::string& needle, std::chrono::seconds limit) const {
  auto holds = [&] {
    std::ifstream in(log_path());
    std::string all{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
    return all.find(needle) != std::string::npos;
  };
  int fd = ::inotify_init1(IN_CLOEXEC | IN_NONBLOCK);
  if (fd < 0) {
    return holds();
  }
  // Watched before the first read, so a write between the two still wakes the wait.
  ::inotify_add_watch(fd, log_path().c_str(), IN_MODIFY);
  auto deadline = std::chrono::steady_clock::now() + limit;
  bool found = holds();
  while (!found) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
      deadline - std::chrono::steady_clock::now());
    pollfd p{fd, POLLIN, 0};
    if (left.count() <= 0 || ::poll(&p, 1, static_cast<int>(left.count())) <= 0) {
      found = holds();
      break;
    }
    std::array<char, 4096> events{};
    while (::read(fd, events.data(), events.size()) > 0) {
    }
    found = holds();
  }
  ::close(fd);
  return found;
}

} // namespace berth::csi_test
