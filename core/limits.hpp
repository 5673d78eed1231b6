#pragma once

// Every bound on what a client can make a record hold, in one place. The journal
// frames one record per put, so these together keep the largest possible record
// far below max_frame_bytes: an acknowledged record can always be read back.
// docs/running.md lists them for operators.

#include <chrono>
#include <cstddef>
#include <cstdint>

namespace berth::limits {

/// The largest journal frame (length + checksum + JSON) that is written or read. A larger
/// record is refused when written; a length field beyond it is damage when read.
/// (max_record_json_bytes below must stay under it: see the static_assert at the end.)
inline constexpr uint32_t max_frame_bytes = 64u << 20;

/// Distinct Docker mount IDs one volume may be mounted by at once.
inline constexpr size_t max_mount_ids = 4096;

/// Length of one Docker mount ID.
inline constexpr size_t max_mount_id_bytes = 256;

/// Docker driver options or CSI parameters (also mutable parameters) per volume.
inline constexpr size_t max_options = 64;

/// Length of an option or parameter key.
inline constexpr size_t max_option_key_bytes = 128;

/// Length of an option or parameter value.
inline constexpr size_t max_option_value_bytes = 4096;

/// The largest readAheadKB (a block volume's mutable parameter): 64 MiB of read-ahead
/// per device is already far beyond what any disk profits from.
inline constexpr uint64_t max_read_ahead_kb = 65536;

/// CSI publications (target paths) of one volume.
inline constexpr size_t max_targets = 256;

/// Mount flags in one CSI volume capability.
inline constexpr size_t max_mount_flags = 32;

/// Length of one mount flag.
inline constexpr size_t max_mount_flag_bytes = 256;

/// Length of a path a client names (staging path, target path): PATH_MAX (4096)
/// less the terminating NUL, so every accepted path can reach the kernel.
inline constexpr size_t max_path_bytes = 4095;

/// Length of a volume or snapshot name (also a CSI volume or snapshot ID).
inline constexpr size_t max_name_bytes = 128;

// -- connections: the HTTP servers on unix sockets (Docker plugin, admin) ----------

/// A request, header and body, must arrive whole within this time of its first byte
/// (a client that sends half a header is disconnected: slowloris).
inline constexpr std::chrono::milliseconds http_request_deadline{10000};

/// A keep-alive connection that sends no request for this long is closed.
inline constexpr std::chrono::milliseconds http_idle_timeout{120000};

/// Connections one HTTP socket serves at once; more wait in the listen backlog
/// (accepting pauses) until one closes.
inline constexpr size_t max_http_connections = 256;

// -- the metrics endpoint (protocols/metrics, --metrics-address) ------------------------

/// /healthz answers 503 when the registry (a ping) or the persistence actor (a flush,
/// which waits for a group commit in progress) does not answer within this time. Under
/// a Kubernetes probe's default timeout (1 s) with room for the reply.
inline constexpr std::chrono::milliseconds health_answer_timeout{800};

/// The largest request body the metrics endpoint reads: its requests are GETs.
inline constexpr size_t max_metrics_request_bytes = 4096;

/// Connections the metrics endpoint serves at once (scrapers and probes).
inline constexpr size_t max_metrics_connections = 64;

// -- the Kubernetes API client (protocols/kube), for `berthd prestop` --------------------

/// The largest response body (a Node, one page of a LIST, a Status) the client reads.
inline constexpr size_t max_kube_response_bytes = 64u << 20;

/// The longest line (one watch event) of a watch stream; etcd keeps objects under 1.5 MiB.
inline constexpr size_t max_kube_watch_line_bytes = 16u << 20;

/// The longest a watch is asked to run (its timeoutSeconds), and how much longer the
/// server is given to end it: a watch that is neither ended nor heard from by then is a dead
/// connection (a half-open TCP connection sends nothing and never ends), and is watched again.
/// kube-apiserver ends a watch at its timeoutSeconds (docs/architecture.md, "The Kubernetes
/// API client").
inline constexpr std::chrono::seconds kube_watch_window{30};
inline constexpr std::chrono::seconds kube_watch_grace{10};

/// How many idle connections to the API server the client keeps for its next calls
/// (HTTP/1.1 keep-alive), and for how long: kube-apiserver closes a connection idle for 90 s
/// (its http.Server's IdleTimeout), so one idle for less is rarely closed under a request.
inline constexpr size_t kube_idle_connections = 4;
inline constexpr std::chrono::seconds kube_connection_idle{60};

/// How many distinct warnings of the API server (its `Warning` headers) the client logs, once
/// each; past that it logs none, so a server that varies them cannot fill the log.
inline constexpr size_t kube_warnings_kept = 64;

/// The largest kubeconfig, token, certificate or key file the client reads.
inline constexpr size_t max_kube_file_bytes = 4u << 20;

// -- the Docker Engine API client (protocols/docker/engine) ------------------------------

/// Every call to dockerd's API (connect, request, whole answer; for the events stream, up to
/// its 200 header) must finish within this time. dockerd answers /_ping, /info and
/// /containers/json in milliseconds; a daemon that takes longer is hung.
inline constexpr std::chrono::milliseconds docker_api_call_timeout{10000};

/// The longest the events stream may stay silent before the client ends it and opens it
/// again. dockerd sends nothing while nothing happens, so silence alone cannot tell a quiet
/// dockerd from a hung one or a stream that died without closing; opening the stream again
/// (bounded by docker_api_call_timeout until its header) tells them apart, at the price of one
/// events call and one container list a minute on a quiet host.
inline constexpr std::chrono::milliseconds docker_events_idle{60000};

/// The largest answer body read from dockerd (a /containers/json of thousands of containers).
inline constexpr size_t max_docker_response_bytes = 64u << 20;

/// The longest line (one event) of dockerd's events stream; events are under 4 KiB.
inline constexpr size_t max_docker_event_line_bytes = 1u << 20;

/// The first delay before the events stream is opened again after dockerd went away.
inline constexpr std::chrono::milliseconds docker_events_backoff_first{250};

/// The longest delay between attempts to reach dockerd again: once it is back, berth sees
/// it within this time.
inline constexpr std::chrono::milliseconds docker_events_backoff_cap{5000};

// -- the dockerd reconciliation (docker_sync) -------------------------------------------

/// Container events (die, destroy) kept for the release rules: those of the last 10 minutes,
/// and at most this many (the oldest go first). A die stays long enough for its grace.
inline constexpr std::chrono::minutes docker_event_window{10};
inline constexpr size_t max_docker_events_kept = 10000;

/// Mount ID -> container ties kept after their config.v2.json is gone (a removed
/// container), so a destroyed container's IDs still name it; the oldest go first.
inline constexpr size_t max_retained_mount_ids = 10000;

/// The longest --die-grace-ms: well inside docker_event_window, so a die is still known when
/// its grace ends.
inline constexpr std::chrono::milliseconds max_die_grace{std::chrono::minutes(5)};

/// The largest DockerRootDir/containers/<id>/config.v2.json read for its mount IDs (they
/// are a few KiB; a larger one is skipped and its IDs decided per volume).
inline constexpr size_t max_docker_config_bytes = 4u << 20;

/// How long the reconciliation waits for berthd's own registry (the Docker records, a
/// release's answer). A release that unmounts waits for its backend call, itself bounded
/// by --backend-timeout-ms; past this the release still runs, only its answer is not awaited.
inline constexpr std::chrono::milliseconds docker_sync_registry_wait{std::chrono::minutes(2)};

// -- berthctl -----------------------------------------------------------------------------

/// The shortest refresh interval of `berthctl top --interval`: each refresh is a request
/// to berthd, so a shorter one would load the daemon it is meant to watch.
inline constexpr std::chrono::milliseconds min_top_interval{100};

/// The longest refresh interval of `berthctl top --interval`.
inline constexpr std::chrono::milliseconds max_top_interval{std::chrono::hours(1)};

/// How long each berthctl call waits for berthd's answer unless --timeout says: a
/// stopped or wedged berthd must not hang berthctl (or a script that runs it) forever.
inline constexpr std::chrono::milliseconds default_cli_timeout{std::chrono::seconds(10)};

/// How long `berthctl snapshot diff` waits unless --timeout says: where two snapshots share
/// no extents, berthd reads both images whole (docs/design.md, "Changed block tracking").
inline constexpr std::chrono::milliseconds default_snapshot_diff_timeout{std::chrono::minutes(10)};

/// The bounds of `berthctl --timeout`.
inline constexpr std::chrono::milliseconds min_cli_timeout{100};
inline constexpr std::chrono::milliseconds max_cli_timeout{std::chrono::hours(1)};

/// The longest unix socket path (--socket): sockaddr_un's 108 bytes less the NUL.
inline constexpr size_t max_socket_path_bytes = 107;

// -- what the bounds add up to -------------------------------------------------------------

/// The longest JSON string a client string of `n` bytes becomes: quotes, and every byte a
/// control character, which JSON writes as \u00XX.
constexpr size_t json_string_bytes(size_t n) {
  return 6 * n + 2;
}

/// An upper bound on one record's JSON with every bound above reached at once. The fixed
/// fields (name, backend, kind, source, device, sizes, keys and punctuation) take far less
/// than the 64 KiB allowed for them.
inline constexpr size_t max_record_json_bytes =
  max_mount_ids * (json_string_bytes(max_mount_id_bytes) + 12)
  // mount_origins: each ID again, with its origin ({"dockerd":"PID@TICKS" of at most 31
  // bytes,"last_mounted_ms":a 64-bit integer}: under 96 bytes with keys and punctuation)
  + max_mount_ids * (json_string_bytes(max_mount_id_bytes) + 96)
  // options and mutable_parameters, each up to max_options entries
  + 2 * max_options * (json_string_bytes(max_option_key_bytes)
                       + json_string_bytes(max_option_value_bytes) + 2)
  + max_targets * (json_string_bytes(max_path_bytes) + 48
                   + max_mount_flags * (json_string_bytes(max_mount_flag_bytes) + 1))
  + max_mount_flags * (json_string_bytes(max_mount_flag_bytes) + 1)
  + json_string_bytes(max_path_bytes) + (size_t{64} << 10);

static_assert(max_record_json_bytes + 8 < max_frame_bytes,
              "the bounds on client input allow a record the journal cannot frame: lower a "
              "bound or raise max_frame_bytes");

} // namespace berth::limits
