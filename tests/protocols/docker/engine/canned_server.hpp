#pragma once

// A stand-in for dockerd's socket in the client's tests: a unix socket in a temp dir whose
// connections are answered by a test's function (canned bytes, silence, a slow stream).

#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <atomic>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

namespace berth::docker_engine::testing {

/// Listens on PATH; each connection runs `respond(fd, request_head)` on its own thread.
class canned_server {
public:
  using responder = std::function<void(int fd, const std::string& request)>;

  /// @param listen false: bind only (a socket nobody accepts on: connect is refused).
  canned_server(const std::string& path, responder respond, bool listen = true)
    : path_(path), respond_(std::move(respond)) {
    fd_ = ::socket(AF_UNIX, SOCK_STREAM, 0);
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    path.copy(addr.sun_path, sizeof addr.sun_path - 1);
    ::unlink(path.c_str());
    EXPECT_EQ(::bind(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
    if (listen) {
      EXPECT_EQ(::listen(fd_, 16), 0);
      acceptor_ = std::thread{[this] { accept_loop(); }};
    }
  }

  ~canned_server() {
    done_ = true;
    ::shutdown(fd_, SHUT_RDWR);
    ::close(fd_);
    if (acceptor_.joinable()) {
      acceptor_.join();
    }
    for (auto& t : sessions_) {
      t.join();
    }
    ::unlink(path_.c_str());
  }

  /// The request heads received so far.
  std::vector<std::string> requests() {
    std::lock_guard<std::mutex> guard{mutex_};
    return requests_;
  }

  /// Writes all of `bytes`; false when the peer is gone.
  static bool write_all(int fd, const std::string& bytes) {
    size_t off = 0;
    while (off < bytes.size()) {
      auto n = ::send(fd, bytes.data() + off, bytes.size() - off, MSG_NOSIGNAL);
      if (n <= 0) {
        return false;
      }
      off += static_cast<size_t>(n);
    }
    return true;
  }

  /// Blocks until the peer closes (or `stop` is set by the destructor).
  void wait_for_close(int fd) {
    char c;
    while (!done_ && ::recv(fd, &c, 1, 0) > 0) {
    }
  }

  std::atomic<bool> done_{false};

private:
  void accept_loop() {
    while (!done_) {
      int c = ::accept(fd_, nullptr, nullptr);
      if (c < 0) {
        return;
      }
      std::lock_guard<std::mutex> guard{mutex_};
      sessions_.emplace_back([this, c] {
        std::string head;
        char buf[4096];
        while (head.find("\r\n\r\n") == std::string::npos) {
          auto n = ::recv(c, buf, sizeof buf, 0);
          if (n <= 0) {
            break;
          }
          head.append(buf, static_cast<size_t>(n));
        }
        {
          std::lock_guard<std::mutex> g{mutex_};
          requests_.push_back(head);
        }
        respond_(c, head);
        ::close(c);
      });
    }
  }

  std::string path_;
  responder respond_;
  int fd_ = -1;
  std::thread acceptor_;
  std::mutex mutex_;
  std::vector<std::thread> sessions_;
  std::vector<std::string> requests_;
};

} // namespace berth::docker_engine::testing
