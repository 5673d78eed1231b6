#pragma once

// berth-bench csi-burst: bursts of ControllerExpandVolume and ControllerModifyVolume
// on one volume, as external-resizer and the volume modifier send them when a PVC's
// size and VolumeAttributesClass change together (docs/design.md, "Expand and modify
// coalesce into one call"); see csi_burst_mode.cpp.
// The options and the report line are here, apart from gRPC, to be unit-tested; the
// options are parsed by berth-bench's one table (bench_args.cpp).

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "apps/bench/latency.hpp"

namespace berth::bench {

/// Options of the csi-burst mode.
struct burst_options {
  std::string endpoint;          ///< "unix:///PATH" (a bare absolute path is taken as unix://)
  long clients = 0;              ///< K: requests per burst, sent at once
  long rounds = 5;               ///< R: bursts, one after the other
  std::string admin_socket;      ///< berthd's admin socket, for "modifications"
  std::string prefix = "bench";  ///< the volume is <prefix>-burst-<pid>
  long size_mb = 1024;           ///< the volume's size at creation
  long step_mb = 64;             ///< each round's expand asks this much more
  std::string parameter = "readAheadKB"; ///< the mutable parameter the modifies set
  bool help = false;             ///< --help: print the usage, run nothing
};

/// Parses the arguments after "csi-burst". Returns the usage error (naming the bad
/// argument), or nothing when `out` is complete. --endpoint and --clients are required;
/// --admin-socket defaults to berthd's default (/run/berth/admin.sock).
std::optional<std::string> parse_burst_args(const std::vector<std::string>& args,
                                            burst_options& out);

/// What a run measured.
struct burst_result {
  /// Backend modifications per round ("modifications" after less before), for the
  /// rounds whose record could be read both times.
  std::vector<uint64_t> backend_calls;
  uint64_t errors = 0;        ///< failed calls, plus rounds whose record could not be read
  latency_recorder latency;   ///< every call that succeeded, expand and modify (ms)
  latency_recorder expand;    ///< ControllerExpandVolume calls
  latency_recorder modify;    ///< ControllerModifyVolume calls
};

/// The request round `round` (0-based) makes of client `k`: even clients expand, odd
/// ones modify.
inline bool burst_client_expands(long k) {
  return k % 2 == 0;
}

/// The size every expand asks for in round `round` (0-based), in bytes.
uint64_t burst_size_bytes(const burst_options& opt, long round);

/// The value every modify sets in round `round` (0-based): one value per round.
std::string burst_parameter_value(long round);

/// The report's last line: one JSON object with mode, endpoint, clients, rounds,
/// backend_calls_per_burst (their mean; null when no round could be read),
/// backend_calls (per round), errors, calls_ok (the calls that succeeded, whose
/// latencies the percentiles are), p50_ms, p99_ms, max_ms, expand_p99_ms
/// and modify_p99_ms.
std::string burst_json(const burst_options& opt, burst_result& result);

/// Runs the mode; returns the exit code (0, 1 when the setup failed, 2 with errors).
int run_csi_burst(const burst_options& opt);

} // namespace berth::bench
