#include "protocols/metrics/process_stats.hpp"

#include <dirent.h>
#include <unistd.h>

#include <fstream>

#include "core/errors.hpp"
#include "core/proc_stat.hpp"

namespace berth::metrics {

namespace {

caf::error unreadable(const std::string& path, const std::string& why) {
  return make_error(ec::unavailable, "cannot read " + path + ": " + why);
}

/// The boot time, seconds since the epoch (`btime` of /proc/stat).
caf::expected<double> boot_time() {
  std::ifstream in{"/proc/stat"};
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("btime ", 0) == 0) {
      return std::stod(line.substr(6));
    }
  }
  return unreadable("/proc/stat", "no btime line");
}

} // namespace

caf::expected<process_stats> read_process_stats() {
  std::ifstream in{"/proc/self/stat"};
  std::string text;
  if (!std::getline(in, text)) {
    return unreadable("/proc/self/stat", "empty");
  }
  // starttime is field 22, rss field 24 (proc(5)): [19] and [21] of the fields after the
  // command.
  auto f = parse_stat_fields(text);
  if (!f) {
    return unreadable("/proc/self/stat", "no ')' after the command");
  }
  if (f->size() < 22) {
    return unreadable("/proc/self/stat", std::to_string(f->size() + 2) + " fields, expected 24+");
  }
  auto btime = boot_time();
  if (!btime) {
    return btime.error();
  }
  process_stats out;
  auto ticks = static_cast<double>(::sysconf(_SC_CLK_TCK));
  out.start_time_seconds = *btime + std::stod((*f)[19]) / ticks;
  out.resident_memory_bytes = std::stod((*f)[21]) * static_cast<double>(::sysconf(_SC_PAGESIZE));
  auto* dir = ::opendir("/proc/self/fd");
  if (dir == nullptr) {
    return unreadable("/proc/self/fd", "cannot open the directory");
  }
  int fds = 0;
  while (auto* e = ::readdir(dir)) {
    if (e->d_name[0] != '.') {
      ++fds;
    }
  }
  ::closedir(dir);
  out.open_fds = fds - 1; // not the descriptor reading the directory
  return out;
}

} // namespace berth::metrics
