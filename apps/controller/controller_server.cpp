#include "apps/controller/controller_server.hpp"

#include <cerrno>
#include <cstring>

#include <sys/stat.h>
#include <unistd.h>

#include <grpcpp/grpcpp.h>
#include <spdlog/spdlog.h>

#include "apps/controller/cluster_services.hpp"
#include "apps/controller/snapshot_store.hpp"
#include "apps/controller/volume_store.hpp"
#include "core/errors.hpp"
#include "protocols/csi/csi_socket.hpp"

namespace berth::controller {

controller_server::controller_server(kube::object_api& api, controller_config cfg)
  : api_(api), cfg_(std::move(cfg)) {
}

controller_server::~controller_server() {
  stop();
}

caf::error controller_server::start() {
  auto path = csi_socket_path(cfg_.endpoint);
  if (!path) {
    return path.error();
  }
  if (auto err = prepare_csi_socket(*path)) {
    return err;
  }
  csi::codec_env env;
  env.driver_name = cfg_.driver_name;
  // The backends every berthd node has; which one a volume gets is its StorageClass's.
  env.backends = {"block", "local"};
  env.default_backend = "block";
  store_ = std::make_unique<volume_store>(api_);
  snapshots_ = std::make_unique<snapshot_store>(api_);
  identity_ = std::make_unique<cluster_identity>(cfg_.driver_name, cfg_.version);
  controller_ =
    std::make_unique<cluster_controller>(*store_, *snapshots_, env, cfg_.advertise_since_1_10);
  grpc::ServerBuilder builder;
  builder.AddListeningPort("unix:" + *path, grpc::InsecureServerCredentials());
  builder.RegisterService(identity_.get());
  builder.RegisterService(controller_.get());
  server_ = builder.BuildAndStart();
  if (!server_) {
    return make_error(ec::failed_precondition, "CSI controller cannot listen on " + *path);
  }
  path_ = *path;
  if (::chmod(path_.c_str(), 0660) != 0) {
    auto err = errno;
    stop();
    return make_error(ec::failed_precondition,
                      "cannot chmod CSI socket " + *path + " to 0660: " + std::strerror(err));
  }
  spdlog::info("CSI controller {} {} serving on unix://{} over the Kubernetes API",
               cfg_.driver_name, cfg_.version, path_);
  return caf::none;
}

void controller_server::stop(std::chrono::milliseconds deadline) {
  if (!server_) {
    return;
  }
  server_->Shutdown(std::chrono::system_clock::now() + deadline);
  server_->Wait();
  server_.reset();
  if (!path_.empty() && ::unlink(path_.c_str()) != 0 && errno != ENOENT) {
    spdlog::warn("cannot remove CSI socket {}: {}", path_, std::strerror(errno));
  }
  spdlog::info("CSI controller on {} stopped", path_);
}

} // namespace berth::controller
