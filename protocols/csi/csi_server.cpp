#include "protocols/csi/csi_server.hpp"

#include <cerrno>
#include <cstring>

#include <sys/stat.h>
#include <unistd.h>

#include <grpcpp/grpcpp.h>
#include <spdlog/spdlog.h>

#include "core/errors.hpp"
#include "protocols/csi/csi_services.hpp"
#include "protocols/csi/csi_socket.hpp"
#include "protocols/csi/snapshot_metadata_service.hpp"

namespace berth {

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
  if (auto err = prepare_csi_socket(*path)) {
    return err;
  }
  identity_ = std::make_unique<csi::identity_service>(cfg_);
  if (cfg_.serve_controller) {
    controller_ = std::make_unique<csi::controller_service>(gw_, registry_, cfg_);
  }
  node_ = std::make_unique<csi::node_service>(gw_, registry_, cfg_);
  if (cfg_.directory) {
    snapshot_metadata_ = std::make_unique<csi::snapshot_metadata_service>(cfg_);
  }
  grpc::ServerBuilder builder;
  builder.AddListeningPort("unix:" + *path, grpc::InsecureServerCredentials());
  builder.RegisterService(identity_.get());
  if (controller_) {
    builder.RegisterService(controller_.get());
  }
  builder.RegisterService(node_.get());
  if (snapshot_metadata_) {
    builder.RegisterService(snapshot_metadata_.get());
  }
  server_ = builder.BuildAndStart();
  if (!server_) {
    identity_.reset();
    controller_.reset();
    node_.reset();
    snapshot_metadata_.reset();
    return make_error(ec::failed_precondition, "CSI server cannot listen on " + *path);
  }
  path_ = *path;
  if (::chmod(path_.c_str(), 0660) != 0) {
    auto err = errno;
    stop();
    return make_error(ec::failed_precondition,
                      "cannot chmod CSI socket " + *path + " to 0660: " + std::strerror(err));
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
  snapshot_metadata_.reset();
  if (!path_.empty() && ::unlink(path_.c_str()) != 0 && errno != ENOENT) {
    spdlog::warn("cannot remove CSI socket {}: {}", path_, std::strerror(errno));
  }
  spdlog::info("CSI server on {} stopped", path_);
}

} // namespace berth
