#pragma once

// berthd's CSI endpoint: a gRPC server on a unix socket serving the Identity,
// Controller and Node services (csi_services.hpp), and SnapshotMetadata
// (snapshot_metadata_service.hpp).

#include <chrono>
#include <memory>
#include <string>

#include <caf/error.hpp>

#include "actors/actors.hpp"
#include "protocols/csi/csi_config.hpp"
#include "protocols/csi/csi_socket.hpp"
#include "protocols/gateway/gateway.hpp"

namespace grpc {
class Server;
} // namespace grpc

namespace berth {

namespace csi {
class identity_service;
class controller_service;
class node_service;
class snapshot_metadata_service;
} // namespace csi

/// Owns the gRPC server. `gw` and the registry must outlive it (stop() first).
class csi_server {
public:
  csi_server(gateway& gw, registry_actor registry, csi_config cfg);
  ~csi_server();

  csi_server(const csi_server&) = delete;
  csi_server& operator=(const csi_server&) = delete;

  /// Listens on cfg.endpoint ("unix:///abs/path" or "/abs/path"). A socket file
  /// left by a crash is replaced; one another live process answers on is an
  /// error that says so, as is a non-socket file at the path. The socket is
  /// made mode 0660. @returns an error naming the endpoint, or none.
  caf::error start();

  /// Stops accepting, waits for in-flight calls up to `deadline` (then cancels
  /// them), and removes the socket. Idempotent.
  void stop(std::chrono::milliseconds deadline = std::chrono::seconds(10));

  /// The socket path (after start()).
  const std::string& socket_path() const {
    return path_;
  }

private:
  gateway& gw_;
  registry_actor registry_;
  csi_config cfg_;
  std::string path_;
  std::unique_ptr<csi::identity_service> identity_;
  std::unique_ptr<csi::controller_service> controller_;
  std::unique_ptr<csi::node_service> node_;
  /// Null without a record directory to read snapshots from.
  std::unique_ptr<csi::snapshot_metadata_service> snapshot_metadata_;
  std::unique_ptr<grpc::Server> server_;
};

} // namespace berth
