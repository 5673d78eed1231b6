#include "tests/cluster/child_process.hpp"

#include <csignal>
#include <fstream>
#include <sstream>
#include <thread>

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

namespace berth::cluster_test {

child_process::~child_process() {
  stop();
}

std::string child_process::start(const std::vector<std::string>& argv, const std::string& log) {
  int fd = ::open(log.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (fd < 0) {
    return "cannot open " + log;
  }
  std::vector<char*> args;
  std::vector<std::string> copy = argv;
  for (auto& a : copy) {
    args.push_back(a.data());
  }
  args.push_back(nullptr);
  pid_t pid = ::fork();
  if (pid < 0) {
    ::close(fd);
    return "fork failed";
  }
  if (pid == 0) {
    ::dup2(fd, 1);
    ::dup2(fd, 2);
    ::execv(args[0], args.data());
    ::_exit(127);
  }
  ::close(fd);
  pid_ = pid;
  return {};
}

void child_process::stop(std::chrono::seconds limit) {
  if (pid_ <= 0) {
    return;
  }
  ::kill(pid_, SIGTERM);
  auto until = std::chrono::steady_clock::now() + limit;
  int status = 0;
  while (::waitpid(pid_, &status, WNOHANG) == 0) {
    if (std::chrono::steady_clock::now() >= until) {
      ::kill(pid_, SIGKILL);
      ::waitpid(pid_, &status, 0);
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  pid_ = -1;
}

bool child_process::ended_within(std::chrono::milliseconds limit) {
  if (pid_ <= 0) {
    return true;
  }
  auto until = std::chrono::steady_clock::now() + limit;
  int status = 0;
  while (::waitpid(pid_, &status, WNOHANG) == 0) {
    if (std::chrono::steady_clock::now() >= until) {
      return false;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  pid_ = -1;
  return true;
}

bool wait_for_file(const std::string& path, std::chrono::seconds limit) {
  auto until = std::chrono::steady_clock::now() + limit;
  struct stat st {};
  while (::stat(path.c_str(), &st) != 0) {
    if (std::chrono::steady_clock::now() >= until) {
      return false;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return true;
}

std::string text_of(const std::string& path) {
  std::ifstream in{path};
  std::stringstream all;
  all << in.rdbuf();
  return all.str();
}

std::string tail_of(const std::string& path, size_t lines) {
  std::ifstream in{path};
  std::vector<std::string> all;
  for (std::string line; std::getline(in, line);) {
    all.push_back(line);
  }
  std::string out;
  for (size_t i = all.size() > lines ? all.size() - lines : 0; i < all.size(); ++i) {
    out += all[i] + "\n";
  }
  return out;
}

} // namespace berth::cluster_test
