#pragma once

// berth-bench io: fio in a CSI block volume, a Docker block volume and a host directory,
// alternating, in one run (see io_mode.cpp and docs/benchmarks.md, "The data path").

#include <string>
#include <vector>

#include "apps/bench/io_jobs.hpp"

namespace berth::bench {

/// Options of the io mode.
struct io_options {
  std::string endpoint;          ///< berthd's CSI socket, "unix:///PATH" ("" = no CSI volume)
  std::string socket;            ///< berthd's Docker plugin socket ("" = no Docker volume)
  std::string host_dir;          ///< the host directory measured beside them (required)
  std::string work_dir = "/tmp"; ///< the CSI volume's staging dir and target go below it
  std::string fs_type = "xfs";   ///< the volumes' filesystem: xfs or ext4
  long size_mb = 4096;           ///< each volume's size
  double runtime = 10;           ///< seconds per fio run
  long rounds = 3;               ///< runs of each job on each target, in rotating order
  std::vector<std::string> jobs; ///< empty: every job (io_job_names())
  std::string prefix = "bench";  ///< volume names start with it
  std::string fio = "fio";       ///< the fio binary
};

int run_io(const io_options& opt);

} // namespace berth::bench
