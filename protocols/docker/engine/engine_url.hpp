#pragma once

// The address of dockerd's API as an operator writes it (the later --docker-api option).

#include <string>

#include <caf/expected.hpp>

namespace berth::docker_engine {

/// The default: dockerd's usual socket.
inline constexpr const char* default_api_url = "unix:///var/run/docker.sock";

/// `unix:///PATH` -> "/PATH". ec::invalid_argument naming the URL for anything else: another
/// scheme (tcp://, http://, npipe:// or none), a relative or empty path, a path over
/// limits::max_socket_path_bytes. An empty URL (the option's "off") is the caller's to handle.
caf::expected<std::string> parse_api_url(const std::string& url);

} // namespace berth::docker_engine
