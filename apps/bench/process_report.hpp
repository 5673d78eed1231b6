#pragma once

// berth-bench's periodic report (--report-every): what berthd holds, read from outside it
// (/proc/PID and its state directory), beside what the clients measured in the interval.

#include <cstdint>
#include <optional>
#include <string>

namespace berth::bench {

/// What berthd holds now; a field it could not read stays unset (or 0 for the journal).
struct process_sample {
  std::optional<double> rss_mb;   ///< VmRSS
  std::optional<long> threads;    ///< Threads in /proc/PID/status
  std::optional<long> fds;        ///< entries of /proc/PID/fd
  uint64_t journal_bytes = 0;     ///< STATE/state/journal.log (+ journal.next mid-compaction)
  uint64_t snapshot_bytes = 0;    ///< STATE/state/snapshot.json
};

/// Reads berthd `pid` (0: none) and its `state_dir` ("" : none).
process_sample sample_process(long pid, const std::string& state_dir);

/// " rss=85.1MB fds=80 threads=27 journal=12.3MB snapshot=1.2MB", for what was read.
std::string describe(const process_sample& s);

} // namespace berth::bench
