#include "apps/bench/common.hpp"

#include <cstdio>
#include <fstream>
#include <sstream>

namespace berth::bench {

std::optional<double> read_rss_mb(long pid, const std::string& field) {
  auto kib = read_status_number(pid, field);
  return kib ? std::optional<double>{*kib / 1024.0} : std::nullopt;
}

std::optional<double> read_status_number(long pid, const std::string& field) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/status");
  if (!in) {
    return std::nullopt;
  }
  std::string line;
  auto key = field + ":";
  while (std::getline(in, line)) {
    if (line.compare(0, key.size(), key) == 0) {
      std::istringstream fields(line.substr(key.size()));
      double number = 0;
      if (fields >> number) {
        return number;
      }
    }
  }
  return std::nullopt;
}

void error_log::add(const std::string& what) {
  ++count_;
  std::lock_guard<std::mutex> guard(mtx_);
  if (printed_ < 5) {
    ++printed_;
    std::fprintf(stderr, "error: %s\n", what.c_str());
  } else if (printed_ == 5) {
    ++printed_;
    std::fprintf(stderr, "error: (further errors are counted, not printed)\n");
  }
}

} // namespace berth::bench
