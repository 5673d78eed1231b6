#pragma once

// The fio jobs berth-bench io runs in each target, and how each one's figure is read.

#include <optional>
#include <string>
#include <vector>

namespace berth::bench {

/// One fio job.
struct io_job {
  std::string name;
  std::vector<std::string> args; ///< fio's, after --name and --directory
  const char* unit;              ///< what the figure is
  /// The figure is the page cache the job leaves over a 256 MiB file, not fio's rate.
  bool measures_cache = false;
};

/// Every job, in the order berth-bench io runs them.
const std::vector<io_job>& io_jobs();

/// The names of io_jobs(), for --job.
const std::vector<std::string>& io_job_names();

/// Runs argv, returns its standard output; `ok` false when it did not exit 0.
std::string run_program(const std::vector<std::string>& argv, bool& ok);

/// Runs `j` with `fio` in `dir` (a timed job for `runtime` seconds) after dropping the page
/// cache: its read+write IOPS or MB/s, or for a job that measures_cache the page cache it
/// left in sizes of its 256 MiB file; nothing when fio failed.
std::optional<double> fio_figure(const std::string& fio, double runtime, const io_job& j,
                                 const std::string& dir);

} // namespace berth::bench
