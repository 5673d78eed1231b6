#pragma once

// Which dockerd process answers on a socket. The engine ID of /info survives a restart, so it
// cannot tell instances apart; the peer's pid (SO_PEERCRED) and that process's start time
// (/proc/PID/stat field 22, clock ticks since boot) can: a pid reused by a later process has a
// later start time.

#include <cstdint>
#include <string>

#include <caf/expected.hpp>

#include "core/proc_stat.hpp"

namespace berth::docker_engine {

/// One dockerd process. pid 0: unknown (the peer is in another pid namespace, or its
/// /proc entry could not be read).
struct engine_instance {
  int pid = 0;
  uint64_t start_ticks = 0;  ///< /proc/PID/stat starttime: clock ticks after boot
  std::string command;       ///< /proc/PID/stat field 2 ("dockerd"; "systemd" when socket-activated)

  bool known() const {
    return pid > 0;
  }

  /// The process is dockerd itself. SO_PEERCRED alone names the process that listened, which
  /// under socket activation (Debian's docker.socket: `dockerd -H fd://`) is systemd, whose pid
  /// and start time do not change when dockerd restarts: peer_instance then looks further,
  /// and this is false only when that failed too.
  bool is_dockerd() const {
    return command == "dockerd";
  }

  /// "dockerd pid 1234 (started 5678 ticks after boot)"; "pid 1 systemd, not dockerd (...)"
  /// when the peer is another process; "an unknown dockerd instance".
  std::string describe() const;

  friend bool operator==(const engine_instance& a, const engine_instance& b) {
    return a.pid == b.pid && a.start_ticks == b.start_ticks;
  }
  friend bool operator!=(const engine_instance& a, const engine_instance& b) {
    return !(a == b);
  }
};

/// The /proc/PID/stat parsing lives in core/proc_stat.hpp, shared with the plugin socket's
/// sessions (whose peer is the dockerd that connected).
using berth::parse_stat_command;
using berth::parse_stat_start_ticks;

/// The inode of the socket at the other end of a connected unix socket (sock_diag's
/// UNIX_DIAG_PEER); 0 when the kernel does not say.
uint64_t peer_socket_inode(int socket_fd);

/// A process (other than this one) holding socket inode `inode` open, found in /proc/*/fd; 0
/// when none is found.
int holder_of_socket(uint64_t inode);

/// The process on the other end of a connected unix socket and its start time. SO_PEERCRED
/// names the process that listened; when that is not dockerd (socket activation: systemd),
/// the process holding the accepted end (sock_diag + /proc/*/fd) is taken instead, which is
/// dockerd. An unknown instance (pid 0) when nothing can be read.
engine_instance peer_instance(int socket_fd);

} // namespace berth::docker_engine
