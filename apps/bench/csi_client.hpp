#pragma once

// How berth-bench speaks CSI over gRPC (csi and csi-burst modes): one client per
// connection, one call with a deadline, the requests both modes send.

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>

#include <grpcpp/grpcpp.h>

#include "csi.grpc.pb.h"

namespace berth::bench {

/// The deadline of every CSI call berth-bench makes.
inline constexpr auto csi_rpc_timeout = std::chrono::seconds(60);

/// One client: its own connection (a local subchannel pool) and stubs; the Node stub on
/// `node_endpoint` when it is another socket (berthd controller serves no Node service).
struct csi_client {
  explicit csi_client(const std::string& endpoint, const std::string& node_endpoint = "");

  std::shared_ptr<grpc::Channel> channel;
  std::shared_ptr<grpc::Channel> node_channel;
  std::unique_ptr<::csi::v1::Controller::Stub> controller;
  std::unique_ptr<::csi::v1::Node::Stub> node;
};

/// Runs one RPC with a deadline; "" on success, else "code N message".
template <class Stub, class Req, class Resp>
std::string rpc(Stub& stub, grpc::Status (Stub::*fn)(grpc::ClientContext*, const Req&, Resp*),
                const Req& req, Resp& resp) {
  grpc::ClientContext ctx;
  ctx.set_deadline(std::chrono::system_clock::now() + csi_rpc_timeout);
  auto st = (stub.*fn)(&ctx, req, &resp);
  if (st.ok()) {
    return "";
  }
  return "code " + std::to_string(static_cast<int>(st.error_code())) + " " + st.error_message();
}

/// ControllerGetCapabilities on `endpoint` into `caps`, the check both modes start with;
/// false, after saying on stderr why, when the call failed.
bool controller_capabilities(const std::string& endpoint,
                             ::csi::v1::ControllerGetCapabilitiesResponse& caps);

/// A single-node-writer filesystem capability.
::csi::v1::VolumeCapability mount_capability();

/// CreateVolume of `name` with `bytes` required; `backend` is the StorageClass
/// parameter "backend" ("" = berth's default).
::csi::v1::CreateVolumeRequest create_request(const std::string& name, int64_t bytes,
                                              const std::string& backend);

} // namespace berth::bench
