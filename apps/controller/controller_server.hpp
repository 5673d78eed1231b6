#pragma once

// `berthd controller`: CSI Identity and Controller on a unix socket, over the Kubernetes
// API; no storage, no state of its own.

#include <chrono>
#include <memory>
#include <string>

#include <caf/error.hpp>

#include "protocols/kube/object_api.hpp"

namespace grpc {
class Server;
}

namespace berth::controller {

class cluster_identity;
class cluster_controller;
class snapshot_store;
class volume_store;

struct controller_config {
  std::string endpoint;                      ///< unix:///path
  std::string driver_name = "berth.csi.dev";
  std::string version = BERTH_VERSION;
  /// Advertise GET_SNAPSHOT (CSI 1.12); false for csi-sanity v5.3.1, which refuses it.
  bool advertise_since_1_10 = true;
};

/// Owns the gRPC server and the services. `api` must outlive it.
class controller_server {
public:
  controller_server(kube::object_api& api, controller_config cfg);
  ~controller_server();

  controller_server(const controller_server&) = delete;
  controller_server& operator=(const controller_server&) = delete;

  /// Listens on cfg.endpoint (a stale socket replaced, a live one refused; mode 0660).
  caf::error start();

  /// Stops accepting and waits for in-flight calls up to `deadline`. Idempotent.
  void stop(std::chrono::milliseconds deadline = std::chrono::seconds(10));

private:
  kube::object_api& api_;
  controller_config cfg_;
  std::string path_;
  std::unique_ptr<volume_store> store_;
  std::unique_ptr<snapshot_store> snapshots_;
  std::unique_ptr<cluster_identity> identity_;
  std::unique_ptr<cluster_controller> controller_;
  std::unique_ptr<grpc::Server> server_;
};

} // namespace berth::controller
