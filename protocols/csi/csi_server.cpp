#include "protocols/csi/csi_server.hpp"

#include <cerrno>
#include <cstring>
#include <filesystem>

#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <grpcpp/grpcpp.h>
#include <spdlog/spdlog.h>

#include "core/errors.hpp"
#include "protocols/csi/csi_services.hpp"

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

csi_server::csi_server(gateway& gw, registry_actor registry, csi_config cfg)
  : gw_(gw), registry_(std::move(registry)), cfg_(std::move(cfg)) {
}

csi_server::~csi_server() {
  stop();
}

caf::error csi_server::start() {
  if (server_) {
    return make_error(ec::failed_precondition, "CSI server already listens on " + path_);
  }
  auto path = csi_socket_path(cfg_.endpoint);
  if (!path) {
    return path.error();
  }
  if (cfg_.node_id.empty()) {
    return make_error(ec::invalid_argument, "CSI needs a node id (the host name)");
  }
  if (cfg_.backends.count(cfg_.default_backend) == 0) {
    return make_error(ec::invalid_argument,
                      "CSI default backend \"" + cfg_.default_backend + "\" is not configured");
  }
  std::error_code fs_err;
  std::filesystem::create_directories(std::filesystem::path{*path}.parent_path(), fs_err);
  if (fs_err) {
    return make_error(ec::failed_precondition, "cannot create the directory of CSI socket "
                                                 + *path + ": " + fs_err.message());
  }
  if (auto err = clear_stale_socket(*path)) {
    return err;
  }
  identity_ = std::make_unique<csi::identity_service>(cfg_);
  controller_ = std::make_unique<csi::controller_service>(gw_, registry_, cfg_);
  node_ = std::make_unique<csi::node_service>(gw_, registry_, cfg_);
  grpc::ServerBuilder builder;
  builder.AddListeningPort("unix:" + *path, grpc::InsecureServerCredentials());
  builder.RegisterService(identity_.get());
  builder.RegisterService(controller_.get());
  builder.RegisterService(node_.get());
  server_ = builder.BuildAndStart();
  if (!server_) {
    identity_.reset();
    controller_.reset();
    node_.reset();
    return make_error(ec::failed_precondition, "CSI server cannot listen on " + *path);
  }
  path_ = *path;
  if (::chmod(path_.c_str(), 0660) != 0) {
    auto err = errno;
    stop();
    return make_error(ec::failed_precondition,
                      "cannot chmod CSI socket " + *path + " to 0660: " + errno_text(err));
  }
  spdlog::info("CSI driver {} {} serving on unix://{} (node {})", cfg_.driver_name, cfg_.version,
               path_, cfg_.node_id);
  return {};
}

void csi_server::stop(std::chrono::milliseconds deadline) {
  if (!server_) {
    return;
  }
  // New calls are refused at once. In-flight calls end when their actor replies
  // (every transition is bounded by the backend timeout); after the deadline their
  // clients see them cancelled, but Wait() still returns only once each reactor
  // has finished, so a stop can outlast --stop-timeout-ms by one backend timeout.
  server_->Shutdown(std::chrono::system_clock::now() + deadline);
  server_->Wait();
  server_.reset();
  identity_.reset();
  controller_.reset();
  node_.reset();
  if (!path_.empty() && ::unlink(path_.c_str()) != 0 && errno != ENOENT) {
    spdlog::warn("cannot remove CSI socket {}: {}", path_, errno_text(errno));
  }
  spdlog::info("CSI server on {} stopped", path_);
}

} // namespace berth
