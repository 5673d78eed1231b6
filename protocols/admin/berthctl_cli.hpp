#pragma once

// berthctl's logic, apart from main() so that it can be tested: argument
// parsing, the admin API calls, and the text formats.

#include <iosfwd>
#include <string>
#include <string_view>
#include <vector>

#include <caf/expected.hpp>

#include "core/volume_record.hpp"

namespace berth::cli {

/// Where berthctl looks for berthd unless --socket says otherwise.
inline constexpr const char* default_socket = "/run/berth/admin.sock";

/// Exit codes: success, failure (unreachable, unknown volume, ...), usage error.
enum exit_code : int { exit_ok = 0, exit_failure = 1, exit_usage = 2 };

enum class command { help, version, volumes, inspect };

/// A parsed command line.
struct options {
  std::string socket = default_socket;
  command cmd = command::help;
  std::string name; ///< for inspect
  bool json = false;
};

/// Parses the arguments after argv[0]. A usage error names the bad argument.
caf::expected<options> parse_args(const std::vector<std::string>& args);

/// The --help text.
std::string usage();

/// The first 12 characters of a mount ID (Docker's short container ID).
std::string short_id(std::string_view id);

/// A table with columns NAME, BACKEND, MOUNTED, MOUNT IDS, PATH.
std::string format_table(const std::vector<volume_record>& recs);

/// One record as readable "key: value" lines.
std::string format_record(const volume_record& rec);

/// Runs berthctl: writes results to `out`, messages to `err`; returns the exit code.
int run(const std::vector<std::string>& args, std::ostream& out, std::ostream& err);

} // namespace berth::cli
