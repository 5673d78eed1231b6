#pragma once

// berthctl's logic, apart from main() so that it can be tested: argument
// parsing, the admin API calls, and the text formats.

#include <chrono>
#include <cstdint>
#include <iosfwd>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <caf/expected.hpp>

#include "apps/berthctl/berthctl_failure.hpp"
#include "core/defaults.hpp"
#include "core/limits.hpp"
#include "core/volume_record.hpp"

namespace berth {
class unix_http_client;
} // namespace berth

namespace berth::cli {

/// Where berthctl looks for berthd unless --socket says otherwise.
inline constexpr const char* default_socket = defaults::admin_socket;

/// Exit codes: success, failure (unreachable, unknown volume, ...), usage error
/// (client_ec::usage).
enum exit_code : int { exit_ok = 0, exit_failure = 1, exit_usage = 2 };

enum class command {
  help,
  version,
  volumes,
  inspect,
  resize,
  modify,
  release,
  status,
  top,
  snapshot_create,
  snapshot_list,
  snapshot_remove,
  snapshot_diff,
  unclaimed_list,
  unclaimed_remove,
  export_volume,
  import_volume
};

/// A parsed command line.
struct options {
  std::string socket = default_socket;
  command cmd = command::help;
  /// for inspect, resize, modify, release and snapshot create (the volume); snapshot ls
  /// (the volume whose snapshots are listed, "" for all); snapshot rm (the snapshot);
  /// unclaimed rm (the CSI volume); snapshot diff (the newer snapshot)
  std::string name;
  std::string base;       ///< for snapshot diff: the older snapshot
  std::string since;      ///< for export --since: the snapshot the delta starts from
  std::string onto;       ///< for import --onto: the volume the delta is applied to
  std::string snapshot;   ///< for snapshot create: the new snapshot's name
  std::string mount_id;   ///< for release
  uint64_t size_bytes = 0; ///< for resize
  option_map parameters;  ///< for modify: the key=value pairs; for import: its -o options
  std::vector<std::string> import_pairs; ///< import's -o arguments, as given
  bool json = false;
  /// for top: the time between two samples (--interval SECONDS)
  std::chrono::milliseconds interval{1000};
  /// how long each call to berthd waits for its answer (--timeout SECONDS)
  std::chrono::milliseconds timeout{limits::default_cli_timeout};
};

/// Parses the arguments after argv[0]. A usage error names the bad argument.
caf::expected<options> parse_args(const std::vector<std::string>& args);

/// A size as berthctl resize takes it: bytes, or a number with K, M, G or T (also
/// Ki, Mi, Gi, Ti), each a power of 1024. Zero, anything else and a size beyond
/// 2^64-1 bytes are usage errors naming the text.
caf::expected<uint64_t> parse_size(std::string_view text);

/// An interval as berthctl top --interval takes it: seconds, a decimal number such as
/// 0.5 or 2, between limits::min_top_interval and limits::max_top_interval; anything
/// else is a usage error naming the text.
caf::expected<std::chrono::milliseconds> parse_interval(std::string_view text);

/// A timeout as berthctl --timeout takes it: seconds, as parse_interval, between
/// limits::min_cli_timeout and limits::max_cli_timeout.
caf::expected<std::chrono::milliseconds> parse_timeout(std::string_view text);

/// A size for people: "2 GiB (2147483648 bytes)"; "-" for 0 (no size of its own).
std::string format_size(uint64_t bytes);

/// The line resize and modify print: the volume's size, mutable parameters and
/// modifications after the change.
std::string format_change(const volume_record& rec, command cmd);

/// What `berthctl release` prints for the admin API's answer `body`:
/// "released mount ID X… of volume NAME (count N dropped)", and
/// "(not checked against dockerd: WHY)" when it was not checked.
caf::expected<std::string> format_release(const std::string& body);

/// What berthctl unclaimed prints for berthd's {"listed_at", "unclaimed": [...]}.
caf::expected<std::string> format_unclaimed(const std::string& body);

/// The --help text.
std::string usage();

/// What berthd last measured of a mounted block volume, as the admin API's records carry
/// it: "used_bytes" (its filesystem's), "allocated_bytes" (its image's on the host) and
/// "direct_io" (its loop device's), a field absent when it was not measured; and what it
/// last saw of any volume's health ("health", "conditions").
struct volume_figures {
  std::optional<uint64_t> used;
  std::optional<uint64_t> allocated;
  std::optional<bool> direct_io;
  /// "health": true when healthy, false when abnormal; unset when berthd did not say.
  std::optional<bool> healthy;
  /// "conditions" of an abnormal volume: each one's reason and message.
  std::vector<std::pair<std::string, std::string>> conditions;
  bool operator==(const volume_figures& other) const {
    return used == other.used && allocated == other.allocated && direct_io == other.direct_io
      && healthy == other.healthy && conditions == other.conditions;
  }
};
using figures_map = std::map<std::string, volume_figures>;

/// The figures of the records in an admin API answer (an array, or one record).
figures_map figures_of(const std::string& body);

/// A table with columns NAME, OWNER, KIND, BACKEND, SIZE, USED and ALLOCATED (from
/// `figures`), MOUNTED, MOUNT IDS, PATH.
std::string format_table(const std::vector<volume_record>& recs, const figures_map& figures = {});

/// One record as readable "key: value" lines, with its figures from `figures`.
std::string format_record(const volume_record& rec, const figures_map& figures = {});

/// Sends one request to berthd's admin API at `socket` (GET, POST of `post_body`, or
/// with `remove` DELETE) and
/// returns the body of a 200 answer; otherwise an error whose message is what berthctl
/// prints: client_ec::unreachable with unreachable_message() when it cannot connect,
/// client_ec::no_answer when berthd did not answer in time, client_ec::interrupted when
/// the client's interrupt stopped it, else berthd's {"error"} message with the ec of the
/// answer's status.
caf::expected<std::string> admin_request(unix_http_client& client, const std::string& socket,
                                         const std::string& target,
                                         const std::string* post_body = nullptr,
                                         bool remove = false);

/// `berthctl snapshot ls [VOLUME]`: the snapshots (of VOLUME, "" for all) as a table.
std::string format_snapshots(const std::vector<volume_record>& snapshots,
                             const std::string& volume);

/// What `berthctl snapshot diff` prints for berthd's answer `body` (the admin API's
/// GET /v1/snapshots/TARGET/diff): a summary, then the changed ranges in bytes.
caf::expected<std::string> format_diff(const std::string& body);

/// What `berthctl import --onto` prints for berthd's answer `body` (POST
/// /v1/volumes/NAME/delta): which volume now holds which delta, and its size.
caf::expected<std::string> format_delta_applied(const std::string& body);

/// berthd's error for an answer of status `status` with body `body` ({"error": ...}).
caf::error answer_error(unsigned status, const std::string& body);

/// `berthctl export NAME`: the tar berthd streams, written to `out_fd`; a note on its
/// consistency, or the failure, to `err`. Refuses a terminal as `out_fd`.
int run_export(const options& opts, int out_fd, std::ostream& err);

/// `berthctl import NAME [-o KEY=VALUE]...`: the tar read from `in_fd`, streamed to berthd;
/// the new volume (or the failure) to `out` (`err`). Refuses a terminal as `in_fd`.
int run_import(const options& opts, int in_fd, std::ostream& out, std::ostream& err);

/// Runs berthctl: writes results to `out`, a failure to `err` (report_failure: with --json
/// as JSON, also for a bad command line); returns the exit code. export and import use
/// `in_fd` and `out_fd` (standard input and output).
int run(const std::vector<std::string>& args, std::ostream& out, std::ostream& err,
        int in_fd = 0, int out_fd = 1);

} // namespace berth::cli
