#include "protocols/docker/engine/engine_url.hpp"

#include "core/errors.hpp"
#include "core/limits.hpp"

namespace berth::docker_engine {

caf::expected<std::string> parse_api_url(const std::string& url) {
  auto bad = [&url](const std::string& why) {
    return make_error(ec::invalid_argument,
                      "Docker API address '" + url + "': " + why +
                        "; write unix:///PATH (for example " + default_api_url + ")");
  };
  const std::string scheme = "unix://";
  if (url.compare(0, scheme.size(), scheme) != 0) {
    auto sep = url.find("://");
    if (sep == std::string::npos) {
      return bad("no scheme");
    }
    return bad("scheme " + url.substr(0, sep) + ":// is not supported, only unix:// (berth talks to dockerd on its local socket)");
  }
  auto path = url.substr(scheme.size());
  if (path.empty()) {
    return bad("no socket path");
  }
  if (path.front() != '/') {
    return bad("the socket path must be absolute (three slashes: unix:///PATH)");
  }
  if (path.find('\0') != std::string::npos) {
    return bad("the socket path holds a NUL byte");
  }
  if (path.find('?') != std::string::npos || path.find('#') != std::string::npos) {
    return bad("a query or fragment is not allowed");
  }
  if (path.size() > limits::max_socket_path_bytes) {
    return bad("the socket path is " + std::to_string(path.size()) + " bytes, more than a unix socket takes (" +
               std::to_string(limits::max_socket_path_bytes) + ")");
  }
  return path;
}

} // namespace berth::docker_engine
