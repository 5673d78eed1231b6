#include "apps/bench/process_report.hpp"

#include <cstdio>
#include <dirent.h>
#include <sys/stat.h>

#include "apps/bench/common.hpp"

namespace berth::bench {

namespace {

uint64_t file_bytes(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 ? static_cast<uint64_t>(st.st_size) : 0;
}

std::optional<long> count_fds(long pid) {
  auto dir = ::opendir(("/proc/" + std::to_string(pid) + "/fd").c_str());
  if (dir == nullptr) {
    return std::nullopt;
  }
  long n = 0;
  while (auto* e = ::readdir(dir)) {
    if (e->d_name[0] != '.') {
      ++n;
    }
  }
  ::closedir(dir);
  return n;
}

} // namespace

process_sample sample_process(long pid, const std::string& state_dir) {
  process_sample s;
  if (pid > 0) {
    s.rss_mb = read_rss_mb(pid);
    if (auto t = read_status_number(pid, "Threads")) {
      s.threads = static_cast<long>(*t);
    }
    s.fds = count_fds(pid);
  }
  if (!state_dir.empty()) {
    auto dir = state_dir + "/state/";
    s.journal_bytes = file_bytes(dir + "journal.log") + file_bytes(dir + "journal.next");
    s.snapshot_bytes = file_bytes(dir + "snapshot.json");
  }
  return s;
}

std::string describe(const process_sample& s) {
  char buf[256];
  std::string out;
  if (s.rss_mb) {
    std::snprintf(buf, sizeof(buf), " rss=%.1fMB", *s.rss_mb);
    out += buf;
  }
  if (s.fds) {
    out += " fds=" + std::to_string(*s.fds);
  }
  if (s.threads) {
    out += " threads=" + std::to_string(*s.threads);
  }
  if (s.journal_bytes > 0 || s.snapshot_bytes > 0) {
    std::snprintf(buf, sizeof(buf), " journal=%.1fMB snapshot=%.1fMB",
                  static_cast<double>(s.journal_bytes) / 1048576.0,
                  static_cast<double>(s.snapshot_bytes) / 1048576.0);
    out += buf;
  }
  return out;
}

} // namespace berth::bench
