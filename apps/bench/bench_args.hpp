#pragma once

// berth-bench's command line: one CLI11 table of its modes (docker, restart, csi,
// csi-list, csi-burst, io) and their flags, which both parses the arguments and writes --help.

#include <optional>
#include <string>
#include <vector>

#include "apps/bench/common.hpp"
#include "apps/bench/csi_burst.hpp"
#include "apps/bench/csi_list.hpp"
#include "apps/bench/csi_mode.hpp"
#include "apps/bench/io_mode.hpp"

namespace berth::bench {

/// A parsed command line: the mode and its options (the other modes' keep defaults).
struct bench_args {
  std::string
    mode; ///< docker, restart, csi, csi-list, csi-burst or io; "" with --help or --version
  options common;       ///< docker and restart
  csi_options csi;      ///< csi
  csi_list_options list; ///< csi-list
  burst_options burst;  ///< csi-burst
  io_options io;        ///< io
  bool help = false;    ///< --help (also `berth-bench help`): print bench_usage()
  bool version = false; ///< --version
};

/// Parses the arguments after argv[0]. Returns the usage error, which names the bad
/// flag or value, or nothing when `out` is complete.
std::optional<std::string> parse_bench_args(const std::vector<std::string>& args,
                                            bench_args& out);

/// The --help text: every mode with every flag.
std::string bench_usage();

} // namespace berth::bench
