#pragma once

// Helpers for the protocol tests: a temp dir and an io_context on two threads.

#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <filesystem>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>

namespace berth::test {

/// A fresh directory under /tmp, removed with its contents at the end.
struct temp_dir {
  std::string path;
  temp_dir() {
    char tmpl[] = "/tmp/berth-proto-XXXXXX";
    path = ::mkdtemp(tmpl);
  }
  ~temp_dir() {
    std::error_code ignored;
    std::filesystem::remove_all(path, ignored);
  }
};

/// An io_context running on two threads, like berthd's.
struct io_threads {
  boost::asio::io_context io;
  boost::asio::executor_work_guard<boost::asio::io_context::executor_type> guard{
    io.get_executor()};
  std::vector<std::thread> threads;
  std::mutex mtx;
  std::condition_variable cv;
  size_t returned = 0; ///< threads whose run() returned (under mtx)
  io_threads() {
    for (int i = 0; i < 2; ++i) {
      threads.emplace_back([this] {
        io.run();
        std::lock_guard<std::mutex> lock{mtx};
        ++returned;
        cv.notify_all();
      });
    }
  }
  /// Lets run() return once no work is left: every handler started has run to its end
  /// and none waits (a server must have stopped accepting). False past `limit`.
  bool drain(std::chrono::milliseconds limit) {
    guard.reset();
    std::unique_lock<std::mutex> lock{mtx};
    return cv.wait_for(lock, limit, [this] { return returned == threads.size(); });
  }
  void stop() {
    guard.reset();
    io.stop();
    for (auto& t : threads) {
      if (t.joinable()) {
        t.join();
      }
    }
  }
  ~io_threads() {
    stop();
  }
};

} // namespace berth::test
