#include "protocols/csi/csi_socket.hpp"

#include <cerrno>
#include <cstring>
#include <filesystem>

#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <spdlog/spdlog.h>

#include "core/errors.hpp"

namespace berth {

namespace {

std::string errno_text(int err) {
  return std::strerror(err);
}

/// What is at `path`: nothing, a stale socket (removed), or a refusal.
caf::error clear_stale_socket(const std::string& path) {
  struct stat st {};
  if (::lstat(path.c_str(), &st) != 0) {
    if (errno == ENOENT) {
      return {};
    }
    return make_error(ec::failed_precondition,
                      "CSI socket " + path + " cannot be inspected: " + errno_text(errno));
  }
  if (!S_ISSOCK(st.st_mode)) {
    return make_error(ec::failed_precondition, "CSI socket path " + path
                                                 + " exists and is not a socket; refusing to "
                                                   "replace it");
  }
  int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) {
    return make_error(ec::internal, "socket(): " + errno_text(errno));
  }
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::memcpy(addr.sun_path, path.c_str(), path.size() + 1);
  int rc = ::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr));
  int err = errno;
  ::close(fd);
  if (rc == 0) {
    return make_error(ec::failed_precondition,
                      "CSI socket " + path
                        + " is served by another live process (another berthd?); stop it first");
  }
  if (err != ECONNREFUSED) {
    return make_error(ec::failed_precondition,
                      "CSI socket " + path + " cannot be probed: " + errno_text(err));
  }
  if (::unlink(path.c_str()) != 0 && errno != ENOENT) {
    return make_error(ec::failed_precondition,
                      "stale CSI socket " + path + " cannot be removed: " + errno_text(errno));
  }
  spdlog::info("removed stale CSI socket {} (left by a crash)", path);
  return {};
}

} // namespace

caf::expected<std::string> csi_socket_path(const std::string& endpoint) {
  std::string path = endpoint;
  if (path.rfind("unix://", 0) == 0) {
    path = path.substr(7);
  } else if (path.rfind("unix:", 0) == 0) {
    path = path.substr(5);
  }
  if (path.empty() || path.front() != '/') {
    return make_error(ec::invalid_argument,
                      "CSI endpoint \"" + endpoint
                        + "\" is not a unix socket (use unix:///absolute/path)");
  }
  if (path.size() >= sizeof(sockaddr_un::sun_path)) {
    return make_error(ec::invalid_argument, "CSI endpoint \"" + endpoint + "\" is longer than "
                                              + std::to_string(sizeof(sockaddr_un::sun_path) - 1)
                                              + " bytes, the limit of a unix socket path");
  }
  return path;
}

caf::error prepare_csi_socket(const std::string& path) {
  std::error_code fs_err;
  std::filesystem::create_directories(std::filesystem::path{path}.parent_path(), fs_err);
  if (fs_err) {
    return make_error(ec::failed_precondition, "cannot create the directory of CSI socket "
                                                 + path + ": " + fs_err.message());
  }
  return clear_stale_socket(path);
}

} // namespace berth
