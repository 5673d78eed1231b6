#pragma once

// Which process is behind a pid or a unix socket connection, from /proc/PID/stat: its
// command name (field 2) and start time (field 22, clock ticks after boot). A pid alone is
// reused by later processes; a pid with its start time names one process lifetime. Shared
// by the plugin socket's sessions (the peer is the dockerd that connected), the Docker
// Engine API client (protocols/docker/engine: the dockerd that answered) and berthd's own
// process metrics (protocols/metrics: start time and resident memory).

#include <cstdint>
#include <string>
#include <vector>

#include <caf/expected.hpp>

namespace berth {

/// One process lifetime. pid 0: unknown (not a unix socket, a peer in another pid
/// namespace, or a /proc entry that could not be read).
struct process_stat {
  int pid = 0;
  uint64_t start_ticks = 0; ///< /proc/PID/stat starttime: clock ticks after boot
  std::string command;      ///< /proc/PID/stat field 2 without its parentheses ("dockerd")

  bool known() const {
    return pid > 0;
  }
};

/// The fields of a /proc/PID/stat line after the command name, split at white space: the
/// first is field 3 (state), so field N of proc(5) is [N - 3]. The command name (field 2)
/// may hold spaces and parentheses: the fields start after its last ')'.
/// ec::invalid_argument when the line has no ')'.
caf::expected<std::vector<std::string>> parse_stat_fields(const std::string& stat_line);

/// Field 22 (starttime) of a /proc/PID/stat line. The command name (field 2) may hold spaces
/// and parentheses: fields are counted after its last ')'. ec::invalid_argument when absent.
caf::expected<uint64_t> parse_stat_start_ticks(const std::string& stat_line);

/// Field 2 (the command name, without its parentheses) of a /proc/PID/stat line; "" when absent.
std::string parse_stat_command(const std::string& stat_line);

/// Process `pid` as /proc/PID/stat shows it now; unknown when it cannot be read.
process_stat read_process_stat(int pid);

/// The process that connected the other end of the connected unix socket `socket_fd`
/// (SO_PEERCRED: the pid at connect(2)), read once from /proc; unknown for another kind
/// of socket or when nothing can be read. For a socket berth accepted, that is the
/// client (dockerd on the plugin socket), never a listener found elsewhere.
process_stat socket_peer(int socket_fd);

} // namespace berth
