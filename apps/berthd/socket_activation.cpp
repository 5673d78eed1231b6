#include "apps/berthd/socket_activation.hpp"

#include <fcntl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <systemd/sd-daemon.h>
#include <unistd.h>

#include <cstring>

#include "core/errors.hpp"

namespace berth {

namespace {

/// The path `fd` is bound to, or "" when it is not a unix socket bound to a path.
std::string bound_path(int fd) {
  sockaddr_un addr{};
  socklen_t len = sizeof addr;
  if (::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) != 0 ||
      addr.sun_family != AF_UNIX || len <= offsetof(sockaddr_un, sun_path) ||
      addr.sun_path[0] == '\0') { // unnamed, or Linux's abstract namespace
    return {};
  }
  return std::string{addr.sun_path, ::strnlen(addr.sun_path, len - offsetof(sockaddr_un, sun_path))};
}

bool same_file(const std::string& a, const std::string& b) {
  struct stat sa {};
  struct stat sb {};
  return ::stat(a.c_str(), &sa) == 0 && ::stat(b.c_str(), &sb) == 0 && sa.st_dev == sb.st_dev &&
         sa.st_ino == sb.st_ino;
}

} // namespace

passed_sockets::~passed_sockets() {
  for (const auto& e : entries_) {
    ::close(e.fd);
  }
}

passed_sockets::passed_sockets(passed_sockets&& other) noexcept
  : entries_(std::move(other.entries_)) {
  other.entries_.clear();
}

int passed_sockets::claim(const std::string& path) {
  for (auto it = entries_.begin(); it != entries_.end(); ++it) {
    if (it->path == path || same_file(it->path, path)) {
      int fd = it->fd;
      entries_.erase(it);
      return fd;
    }
  }
  return -1;
}

caf::error passed_sockets::check_all_claimed() const {
  if (entries_.empty()) {
    return {};
  }
  std::string paths;
  for (const auto& e : entries_) {
    paths += (paths.empty() ? "" : ", ") + e.path;
  }
  return make_error(ec::invalid_argument,
                    "systemd passed socket(s) bound to " + paths +
                      ", which neither --docker-socket nor --admin-socket names; set those "
                      "flags to the socket unit's ListenStream= paths");
}

caf::expected<passed_sockets> take_passed_sockets() {
  int n = sd_listen_fds(1); // 1: unset LISTEN_* so that no helper berthd runs sees them
  if (n < 0) {
    return make_error(ec::invalid_argument,
                      std::string{"cannot read the sockets systemd passed (LISTEN_FDS): "} +
                        std::strerror(-n));
  }
  auto refuse = [n](int fd, const std::string& why) {
    for (int i = SD_LISTEN_FDS_START; i < SD_LISTEN_FDS_START + n; ++i) {
      ::close(i);
    }
    return make_error(ec::invalid_argument, "systemd passed fd " + std::to_string(fd) + ", " + why);
  };
  std::vector<passed_sockets::entry> entries;
  for (int fd = SD_LISTEN_FDS_START; fd < SD_LISTEN_FDS_START + n; ++fd) {
    ::fcntl(fd, F_SETFD, FD_CLOEXEC);
    if (sd_is_socket_unix(fd, SOCK_STREAM, 1, nullptr, 0) <= 0) {
      return refuse(fd, "which is not a listening unix stream socket; berthd serves only unix "
                        "sockets (ListenStream=/PATH)");
    }
    auto path = bound_path(fd);
    if (path.empty()) {
      return refuse(fd, "a unix socket bound to no path (abstract or unnamed); berthd "
                        "recognizes a passed socket by its path");
    }
    entries.push_back({fd, std::move(path)});
  }
  return passed_sockets{std::move(entries)};
}

void tell_systemd(const char* state) {
  sd_notify(0, state);
}

} // namespace berth
