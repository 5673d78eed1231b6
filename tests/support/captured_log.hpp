#pragma once

// What spdlog's default logger writes while a test runs, for tests that check log lines.

#include <memory>
#include <sstream>
#include <string>

#include <spdlog/sinks/ostream_sink.h>
#include <spdlog/spdlog.h>

namespace berth::test_support {

/// Captures what is logged (debug and up) while it lives; restores the logger after.
struct captured_log {
  captured_log() : old(spdlog::default_logger()) {
    auto sink = std::make_shared<spdlog::sinks::ostream_sink_mt>(out);
    spdlog::set_default_logger(std::make_shared<spdlog::logger>("test", sink));
    spdlog::set_level(spdlog::level::debug);
  }
  ~captured_log() {
    spdlog::set_default_logger(old);
  }
  captured_log(const captured_log&) = delete;
  captured_log& operator=(const captured_log&) = delete;

  /// Lines holding `needle`.
  int count(const std::string& needle) const {
    std::istringstream in{out.str()};
    int n = 0;
    for (std::string line; std::getline(in, line);) {
      n += line.find(needle) != std::string::npos ? 1 : 0;
    }
    return n;
  }

  std::ostringstream out;
  std::shared_ptr<spdlog::logger> old;
};

} // namespace berth::test_support
