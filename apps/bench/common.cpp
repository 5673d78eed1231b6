#include "apps/bench/common.hpp"

#include <cstdio>
#include <fstream>
#include <sstream>

#include <unistd.h>

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

std::optional<double> read_cpu_seconds(long pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string line;
  if (!std::getline(in, line)) {
    return std::nullopt;
  }
  // The command name, in parentheses, may hold spaces: the fields follow its last ')'.
  auto close = line.rfind(')');
  if (close == std::string::npos) {
    return std::nullopt;
  }
  std::istringstream fields(line.substr(close + 1));
  std::string skip;
  for (int i = 3; i <= 13; ++i) { // state .. cmajflt
    fields >> skip;
  }
  double utime = 0;
  double stime = 0;
  if (!(fields >> utime >> stime)) {
    return std::nullopt;
  }
  return (utime + stime) / static_cast<double>(::sysconf(_SC_CLK_TCK));
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
