#pragma once

// berthd under systemd: the listening sockets systemd passes (socket activation,
// sd_listen_fds(3)), each recognized by the path it is bound to, matched against
// --docker-socket and --admin-socket, so the unit's FileDescriptorName= does not matter (with
// none passed, berthd binds its own); and the readiness it reports (sd_notify(3), Type=notify).

#include <string>
#include <vector>

#include <caf/error.hpp>
#include <caf/expected.hpp>

namespace berth {

/// The sockets passed and not yet claimed by a server.
class passed_sockets {
public:
  struct entry {
    int fd;
    std::string path; ///< the path it is bound to (getsockname)
  };

  passed_sockets() = default;
  explicit passed_sockets(std::vector<entry> entries) : entries_(std::move(entries)) {
  }
  /// Closes the sockets nobody claimed.
  ~passed_sockets();
  passed_sockets(passed_sockets&& other) noexcept;
  passed_sockets& operator=(passed_sockets&&) = delete;
  passed_sockets(const passed_sockets&) = delete;
  passed_sockets& operator=(const passed_sockets&) = delete;

  /// The socket bound to `path` (the same string, or the same socket file), taken out of
  /// the set; -1 when none was passed for it.
  int claim(const std::string& path);

  /// ec::invalid_argument naming each socket no flag claimed: a unit whose ListenStream=
  /// does not match berthd's flags would otherwise leave clients at a socket nobody serves.
  caf::error check_all_claimed() const;

  bool empty() const {
    return entries_.empty();
  }

private:
  std::vector<entry> entries_;
};

/// Takes the sockets systemd passed to this process: marks them close-on-exec (berthd runs
/// helpers) and unsets LISTEN_PID, LISTEN_FDS and LISTEN_FDNAMES. An fd that is not a unix
/// stream socket bound to a path is ec::invalid_argument naming it.
caf::expected<passed_sockets> take_passed_sockets();

/// Tells systemd `state` ("READY=1", "STOPPING=1"); nothing when systemd does not listen
/// (no NOTIFY_SOCKET).
void tell_systemd(const char* state);

} // namespace berth
