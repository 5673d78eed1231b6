#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <set>
#include <string>

#include <caf/expected.hpp>

#include "backends/node_path.hpp"
#include "core/defaults.hpp"

namespace berth {

/// berthd's command line. An empty socket path turns that socket off.
struct daemon_options {
  std::string state_dir = "/var/lib/berth";
  /// Block images; empty means STATE/block. Another filesystem keeps them off the journal's.
  std::string block_dir;
  /// Preallocated room for the journal and compaction (STATE/state/reserve); 0 turns it off.
  size_t journal_reserve_mb = 32;
  /// Compact (snapshot, new journal) once the journal passes this many MiB.
  size_t compact_after_mb = 64;
  std::string docker_socket = "/run/docker/plugins/berth.sock";
  std::string admin_socket = defaults::admin_socket;
  /// /metrics, /healthz and /readyz on TCP: HOST:PORT (port 0: any free port); empty
  /// turns the endpoint off.
  std::string metrics_address = "127.0.0.1:9808";
  std::string log_format = "text"; ///< text | json
  std::string log_level = "info";
  std::string import_ecs_state;    ///< amazon-ecs-volume-plugin state file to import
  /// CSI: "unix:///PATH"; empty turns CSI off. Falls back to $CSI_ENDPOINT.
  std::string csi_endpoint;
  std::string node_id;             ///< CSI node ID; falls back to $NODE_ID, then the hostname
  std::string csi_driver_name = "berth.csi.dev";
  /// Cluster mode: CSI Identity and Node only; this node's BerthVolumes carried out.
  bool kubernetes = false;
  std::string kubeconfig; ///< with --kubernetes; "" = in-cluster

  int64_t max_volumes_per_node = 0; ///< NodeGetInfo; 0 = no limit
  std::string csi_capabilities = "1.12"; ///< --csi-capabilities: 1.12 or 1.9
  /// CSI staging and target paths must lie below it (after resolving symlinks).
  std::string kubelet_dir = default_kubelet_dir;
  std::chrono::milliseconds backend_timeout{std::chrono::seconds(30)};
  /// The least time between two modifications (expand, modify) of one volume,
  /// counted from the last that succeeded; 0 = none. The block backend enforces it.
  std::chrono::milliseconds modify_cooldown{0};
  /// The coalescing window of every volume's mailbox (0: off).
  std::chrono::milliseconds coalesce_window{2000};
  std::chrono::milliseconds stop_timeout{std::chrono::seconds(30)};
  /// dockerd's Engine API, "unix:///PATH", for reconciling Docker mount IDs with dockerd
  /// (docs/design.md, "Mount IDs dockerd forgot"); "" turns the reconciliation off.
  std::string docker_api = "unix:///var/run/docker.sock";
  /// How long after a container's `die` an ID of it may still be Unmounted before berth
  /// releases it (at most limits::max_die_grace).
  std::chrono::milliseconds die_grace{10000};
  size_t executor_threads = 16;
  /// How many mounted block volumes' used bytes are measured and exported (0: none).
  size_t usage_series = 1000;
  /// The time between two samples of those used bytes.
  std::chrono::milliseconds usage_interval{15000};
  /// The time between two looks at every volume's health (apps/berthd/health_sampler).
  std::chrono::milliseconds health_interval{10000};
  /// Test only: these volumes' backend calls stall for test_stall (benchmarks).
  std::set<std::string> test_stall_volumes;
  std::chrono::milliseconds test_stall{0};
  bool help = false;
  bool version = false;
};

/// Parses `--flag VALUE` and `--flag=VALUE`; errors name the bad flag or value.
/// CSI_ENDPOINT and NODE_ID in the environment fill --csi-endpoint and --node-id
/// when those are not given (the CSI sidecars' convention).
caf::expected<daemon_options> parse_daemon_options(int argc, const char* const* argv);

/// The --help text.
std::string daemon_usage();

/// What is wrong with a --csi-endpoint value ("" when nothing; empty is allowed).
std::string csi_endpoint_problem(const std::string& v);

/// What is wrong with a --csi-capabilities value ("" when nothing): 1.12 or 1.9.
std::string csi_capabilities_problem(const std::string& v);

/// --csi-capabilities' help, which `berthd controller` shares.
inline constexpr const char* csi_capabilities_help =
  "the CSI version whose capabilities are advertised: 1.12 adds\n"
  "GET_SNAPSHOT and SNAPSHOT_METADATA_SERVICE (their RPCs answer\n"
  "either way); 1.9 for a conformance suite that refuses them,\n"
  "csi-sanity v5.3.1 (default 1.12)";

/// The checks of --log-format and --log-level, which `berthd controller` shares.
/// Each returns what is wrong with a value, "" when nothing (command_line::checker).
std::function<std::string(const std::string&)> log_format_check();
std::function<std::string(const std::string&)> log_level_check();

} // namespace berth
