#pragma once

// What the modes of berth-bench share: options, RSS, the first-errors log.

#include <atomic>
#include <cstdint>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

namespace berth::bench {

/// Mount+Unmount pairs with --report-every, --state-dir and --mixed (docker mode).
struct docker_extras {
  double report_every = 0; ///< seconds between reports; 0: none
  bool mixed = false;      ///< every 32nd round of a client also Creates and Removes a volume
  long lists = 0;          ///< Lists timed one after another once the pairs end; 0: none
};

/// Command-line options of every mode (each mode uses a subset).
struct options {
  std::string mode;
  std::string socket;
  std::string berthd;
  std::string state_dir;
  std::string prefix = "bench";
  std::string stalled;
  std::vector<std::string> berthd_args; ///< extra arguments for berthd (restart mode)
  long volumes = 100;
  long concurrency = 8;
  long ids_per_volume = 2;
  double seconds = 10;
  long pid = 0;
  bool keep = false;
  docker_extras docker; ///< docker mode only
};

/// VmRSS (or another field, e.g. "VmHWM") of `pid` in MiB, from /proc/PID/status.
std::optional<double> read_rss_mb(long pid, const std::string& field = "VmRSS");

/// The CPU time `pid` has used, user and system, in seconds (/proc/PID/stat).
std::optional<double> read_cpu_seconds(long pid);

/// The number of a field of /proc/PID/status as written there (kB for sizes).
std::optional<double> read_status_number(long pid, const std::string& field);


/// Counts errors; remembers and prints (to stderr) the first few.
class error_log {
public:
  void add(const std::string& what);
  uint64_t count() const {
    return count_.load();
  }

private:
  std::atomic<uint64_t> count_{0};
  std::mutex mtx_;
  int printed_ = 0;
};

/// Runs `fn(i)` for i in [0, n) on `threads` threads; each thread gets its own
/// index space split by an atomic counter. `fn` receives (thread index, i).
template <class F>
void parallel_for(long n, long threads, F fn);

/// The volume name `<prefix>-<i>`.
inline std::string volume_name(const std::string& prefix, long i) {
  return prefix + "-" + std::to_string(i);
}

int run_docker(const options& opt);
int run_restart(const options& opt);

} // namespace berth::bench

#include <thread>

template <class F>
void berth::bench::parallel_for(long n, long threads, F fn) {
  std::atomic<long> next{0};
  std::vector<std::thread> pool;
  for (long t = 0; t < threads; ++t) {
    pool.emplace_back([&, t] {
      for (long i = next++; i < n; i = next++) {
        fn(t, i);
      }
    });
  }
  for (auto& th : pool) {
    th.join();
  }
}
