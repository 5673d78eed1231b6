#pragma once

// A stand-in for berthd's admin socket in berthctl's tests: it accepts every connection
// and either never answers (a wedged berthd) or answers each request with one canned
// HTTP response.

#include <atomic>
#include <cstdio>
#include <string>
#include <thread>
#include <vector>

#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <gtest/gtest.h>

namespace berth::test {

class fake_admin {
public:
  /// `answer` empty: accept and never answer.
  explicit fake_admin(std::string answer = {}) : answer_(std::move(answer)) {
    char dir_template[] = "/tmp/berthctl-fake.XXXXXX";
    EXPECT_NE(::mkdtemp(dir_template), nullptr);
    dir_ = dir_template;
    path_ = dir_ + "/admin.sock";
    listener_ = ::socket(AF_UNIX, SOCK_STREAM, 0);
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    std::snprintf(addr.sun_path, sizeof(addr.sun_path), "%s", path_.c_str());
    EXPECT_EQ(::bind(listener_, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0);
    EXPECT_EQ(::listen(listener_, 8), 0);
    thread_ = std::thread([this] { serve(); });
  }

  ~fake_admin() {
    stop_ = true;
    thread_.join();
    for (int fd : accepted_) {
      ::close(fd);
    }
    ::close(listener_);
    ::unlink(path_.c_str());
    ::rmdir(dir_.c_str());
  }

  fake_admin(const fake_admin&) = delete;
  fake_admin& operator=(const fake_admin&) = delete;

  const std::string& path() const {
    return path_;
  }

  /// Connections accepted so far.
  int accepted() const {
    return accepted_count_.load();
  }

private:
  void serve() {
    while (!stop_) {
      struct pollfd p {};
      p.fd = listener_;
      p.events = POLLIN;
      if (::poll(&p, 1, 20) <= 0) {
        continue;
      }
      int fd = ::accept(listener_, nullptr, nullptr);
      if (fd < 0) {
        continue;
      }
      accepted_.push_back(fd);
      ++accepted_count_;
      if (answer_.empty()) {
        continue; // hold the connection open, read nothing, answer nothing
      }
      std::string req;
      char buf[4096];
      while (req.find("\r\n\r\n") == std::string::npos) {
        auto n = ::read(fd, buf, sizeof(buf));
        if (n <= 0) {
          break;
        }
        req.append(buf, static_cast<size_t>(n));
      }
      (void)!::write(fd, answer_.data(), answer_.size());
    }
  }

  std::string answer_;
  std::string dir_;
  std::string path_;
  int listener_ = -1;
  std::thread thread_;
  std::atomic<bool> stop_{false};
  std::atomic<int> accepted_count_{0};
  std::vector<int> accepted_;
};

} // namespace berth::test
