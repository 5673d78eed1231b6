#include "protocols/http/unix_http_server.hpp"

#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <filesystem>
#include <mutex>

#include <spdlog/spdlog.h>

#include "core/errors.hpp"
#include "protocols/http/detail/http_listener.hpp"

namespace berth {

namespace asio = boost::asio;
using local = asio::local::stream_protocol;
using boost::system::error_code;

namespace {

/// True when something accepts connections on `path`.
bool answers(const std::string& path) {
  asio::io_context ctx;
  local::socket probe{ctx};
  error_code err;
  probe.connect(local::endpoint{path}, err);
  return !err;
}

} // namespace

// -- server --------------------------------------------------------------------

namespace {

http_server_limits with_body_limit(size_t body_limit) {
  http_server_limits lim;
  lim.body_limit = body_limit;
  return lim;
}

} // namespace

unix_http_server::unix_http_server(asio::io_context& io, handler_fn handler, size_t body_limit,
                                   std::string name)
  : unix_http_server(io, std::move(handler), with_body_limit(body_limit), std::move(name)) {
}

unix_http_server::unix_http_server(asio::io_context& io, handler_fn handler,
                                   http_server_limits lim, std::string name)
  : listener_(std::make_shared<detail::http_listener<local>>(io, std::move(handler), lim,
                                                      std::move(name))) {
}

unix_http_server::~unix_http_server() {
  stop();
}

void unix_http_server::take_streams(stream_route_fn route, stream_take_fn take) {
  listener_->stream_route = std::move(route);
  listener_->stream_take = std::move(take);
}

caf::error unix_http_server::listen(const std::string& path) {
  auto& l = *listener_;
  std::lock_guard<std::mutex> guard{l.mtx};
  if (l.bound) {
    return make_error(ec::invalid_argument, l.name + " server already listens on " + l.where);
  }
  if (path.empty()) {
    return make_error(ec::invalid_argument, l.name + " socket path is empty");
  }
  if (path.size() >= sizeof(sockaddr_un::sun_path)) {
    return make_error(ec::invalid_argument,
                      "socket path " + path + " is too long (" + std::to_string(path.size()) +
                        " bytes, at most " + std::to_string(sizeof(sockaddr_un::sun_path) - 1) +
                        ")");
  }
  std::error_code fs_err;
  auto parent = std::filesystem::path{path}.parent_path();
  if (!parent.empty()) {
    std::filesystem::create_directories(parent, fs_err);
    if (fs_err) {
      return make_error(ec::invalid_argument,
                        "cannot create directory " + parent.string() + ": " + fs_err.message());
    }
  }
  auto status = std::filesystem::symlink_status(path, fs_err);
  if (std::filesystem::exists(status)) {
    if (!std::filesystem::is_socket(status)) {
      return make_error(ec::invalid_argument,
                        path + " exists and is not a socket; refusing to replace it");
    }
    if (answers(path)) {
      return make_error(ec::unavailable,
                        "another process is serving " + path + " (is another berthd running?)");
    }
    if (::unlink(path.c_str()) != 0 && errno != ENOENT) {
      return make_error(ec::unavailable, "cannot remove stale socket " + path + ": " +
                                           std::generic_category().message(errno));
    }
    spdlog::info("{}: replaced stale socket {}", l.name, path);
  }
  error_code err;
  auto fail = [&](const char* what) {
    error_code ignored;
    l.acceptor.close(ignored);
    return make_error(ec::unavailable,
                      std::string{"cannot "} + what + " " + path + ": " + err.message());
  };
  if (l.acceptor.open(local{}, err); err) {
    return fail("open a socket for");
  }
  if (l.acceptor.bind(local::endpoint{path}, err); err) {
    return fail("bind");
  }
  if (l.acceptor.listen(asio::socket_base::max_listen_connections, err); err) {
    ::unlink(path.c_str());
    return fail("listen on");
  }
  struct stat st {};
  if (::chmod(path.c_str(), 0660) != 0 || ::stat(path.c_str(), &st) != 0) {
    err.assign(errno, boost::system::generic_category());
    ::unlink(path.c_str());
    return fail("set the mode of");
  }
  if (::geteuid() == 0 && ::chown(path.c_str(), 0, 0) != 0) {
    err.assign(errno, boost::system::generic_category());
    ::unlink(path.c_str());
    return fail("chown");
  }
  l.where = path;
  dev_ = st.st_dev;
  ino_ = st.st_ino;
  owns_file_ = true;
  l.bound = true;
  l.stopped = false;
  l.accept_next();
  return {};
}

caf::error unix_http_server::adopt(int fd, const std::string& path) {
  auto& l = *listener_;
  std::lock_guard<std::mutex> guard{l.mtx};
  auto refuse = [&](const std::string& why) {
    ::close(fd);
    return make_error(ec::invalid_argument,
                      l.name + ": the socket passed for " + path + " " + why);
  };
  if (l.bound) {
    return refuse("comes after it already listens on " + l.where);
  }
  int type = 0;
  int accepting = 0;
  socklen_t len = sizeof type;
  if (::getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &len) != 0 || type != SOCK_STREAM) {
    return refuse("is not a stream socket");
  }
  len = sizeof accepting;
  if (::getsockopt(fd, SOL_SOCKET, SO_ACCEPTCONN, &accepting, &len) != 0 || accepting == 0) {
    return refuse("is not listening");
  }
  error_code err;
  if (l.acceptor.assign(local{}, fd, err); err) {
    return refuse("cannot be used: " + err.message());
  }
  l.where = path;
  owns_file_ = false;
  l.bound = true;
  l.stopped = false;
  l.accept_next();
  return {};
}

void unix_http_server::stop() {
  auto& l = *listener_;
  std::lock_guard<std::mutex> guard{l.mtx};
  l.stopped = true;
  error_code ignored;
  l.acceptor.close(ignored);
  l.retry.cancel();
  if (!l.bound) {
    return;
  }
  l.bound = false;
  // Remove the file only while it is still ours, not a successor's, and never one
  // another process passed: it outlives berthd.
  struct stat st {};
  if (owns_file_ && ::stat(l.where.c_str(), &st) == 0 && st.st_dev == dev_ &&
      st.st_ino == ino_) {
    ::unlink(l.where.c_str());
  }
  spdlog::info("{}: stopped accepting on {}", l.name, l.where);
}

size_t unix_http_server::in_flight() const {
  return listener_->in_flight.load();
}

size_t unix_http_server::connections() const {
  return listener_->connections.load();
}

} // namespace berth
