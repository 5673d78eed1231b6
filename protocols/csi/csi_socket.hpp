#pragma once

// The unix socket a CSI endpoint listens on: the path of an endpoint, and what is there
// before listening (a socket left by a crash is removed; a live one, or a file, is
// refused). Shared by berthd's CSI server and `berthd controller`'s.

#include <string>

#include <caf/error.hpp>
#include <caf/expected.hpp>

namespace berth {

/// The socket path of a CSI endpoint: "unix:///p" and "unix:/p" -> "/p", "/p" -> "/p";
/// anything else (tcp, relative paths, too long for sockaddr_un) -> ec::invalid_argument.
caf::expected<std::string> csi_socket_path(const std::string& endpoint);

/// Makes the socket's directory and clears `path`: nothing there, or a stale socket
/// (removed, logged); a socket another live process answers on, or a file that is no
/// socket, is ec::failed_precondition naming the path.
caf::error prepare_csi_socket(const std::string& path);

} // namespace berth
