#pragma once

// Helpers for the protocol tests: a temp dir and an io_context on two threads.

#include <cstdlib>
#include <filesystem>
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
  io_threads() {
    for (int i = 0; i < 2; ++i) {
      threads.emplace_back([this] { io.run(); });
    }
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
