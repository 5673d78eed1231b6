#pragma once

// The base of every CSI conformance test: a fresh berthd (berthd_process), gRPC
// stubs on its socket, request builders, and assertions that name the RPC, the
// request and the status when a code is not the one the spec asks for.
//
//   EXPECT_RPC(INVALID_ARGUMENT, call(&Ctrl::CreateVolume, req, resp));

#include <chrono>
#include <map>
#include <memory>
#include <string>

#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>

#include "csi.grpc.pb.h"
#include "tests/csi/berthd_process.hpp"
#include "tests/csi/host_probe.hpp"

namespace berth::csi_test {

namespace v1 = ::csi::v1;
using Ident = v1::Identity::Stub;
using Ctrl = v1::Controller::Stub;
using Node = v1::Node::Stub;
using Mode = v1::VolumeCapability::AccessMode;

inline constexpr uint64_t MiB = 1024ull * 1024;
inline constexpr uint64_t GiB = 1024ull * MiB;
inline constexpr const char* node_id = "test-node";
inline constexpr const char* topology_key = "topology.berth.csi.dev/node";

/// "INVALID_ARGUMENT" etc.
std::string code_name(grpc::StatusCode code);

/// A mount capability (fs_type "" = the volume's) or a raw block one.
v1::VolumeCapability mount_cap(const std::string& fs_type = "",
                               Mode::Mode mode = Mode::SINGLE_NODE_WRITER);
v1::VolumeCapability block_cap(Mode::Mode mode = Mode::SINGLE_NODE_WRITER);

/// A CreateVolume request: one capability, required/limit bytes (0 = unset).
v1::CreateVolumeRequest create_request(const std::string& name, uint64_t required,
                                       uint64_t limit = 0,
                                       const std::map<std::string, std::string>& params = {},
                                       const v1::VolumeCapability& cap = mount_cap());

class csi_fixture : public ::testing::Test {
protected:
  void SetUp() override;
  void TearDown() override;

  // -- daemon -------------------------------------------------------------------

  berthd_process& berthd() {
    return *berthd_;
  }
  /// (Re)connects the stubs and waits until Probe answers (30 s).
  ::testing::AssertionResult connect();
  /// SIGTERM (or SIGKILL when `crash`), start again on the same state, reconnect.
  ::testing::AssertionResult restart(bool crash);

  // -- calls ----------------------------------------------------------------------

  template <class Req, class Resp>
  grpc::Status call(grpc::Status (Ident::*fn)(grpc::ClientContext*, const Req&, Resp*),
                    const Req& req, Resp& resp) {
    return invoke(*ident_, "Identity", fn, req, resp);
  }
  template <class Req, class Resp>
  grpc::Status call(grpc::Status (Ctrl::*fn)(grpc::ClientContext*, const Req&, Resp*),
                    const Req& req, Resp& resp) {
    return invoke(*ctrl_, "Controller", fn, req, resp);
  }
  template <class Req, class Resp>
  grpc::Status call(grpc::Status (Node::*fn)(grpc::ClientContext*, const Req&, Resp*),
                    const Req& req, Resp& resp) {
    return invoke(*node_, "Node", fn, req, resp);
  }

  /// Succeeds when `got` has code `want`; else names the last call, its request,
  /// the code and the message.
  ::testing::AssertionResult code_is(grpc::StatusCode want, const grpc::Status& got) const;

  /// The last call as "Service.Rpc(request)".
  const std::string& last_call() const {
    return last_call_;
  }

  // -- steps that must succeed (use with ASSERT_TRUE) ------------------------------

  ::testing::AssertionResult create_volume(const v1::CreateVolumeRequest& req, v1::Volume* out);
  /// A 1 GiB mount volume (xfs unless params say otherwise).
  ::testing::AssertionResult create_volume(const std::string& name, v1::Volume* out,
                                           const std::map<std::string, std::string>& params = {},
                                           uint64_t bytes = GiB);
  ::testing::AssertionResult delete_volume(const std::string& id);
  ::testing::AssertionResult create_snapshot(const std::string& name, const std::string& source,
                                             v1::Snapshot* out);

  /// Staging path for a volume (the directory is created, as a CO does).
  std::string staging_path(const std::string& id);
  /// A target path for a volume (its parent exists; the target does not).
  std::string target_path(const std::string& id, const std::string& tag = "t");

  /// The node calls whose success a test needs: each is its *_status below, checked OK.
  ::testing::AssertionResult stage(const std::string& id, const std::string& staging,
                                   const v1::VolumeCapability& cap = mount_cap());
  ::testing::AssertionResult unstage(const std::string& id, const std::string& staging);
  ::testing::AssertionResult publish(const std::string& id, const std::string& staging,
                                     const std::string& target,
                                     const v1::VolumeCapability& cap = mount_cap(),
                                     bool readonly = false);
  ::testing::AssertionResult unpublish(const std::string& id, const std::string& target);

  /// The node calls whose status a test reads (a refusal it expects).
  grpc::Status stage_status(const std::string& id, const std::string& staging,
                            const v1::VolumeCapability& cap = mount_cap());
  grpc::Status unstage_status(const std::string& id, const std::string& staging);
  grpc::Status publish_status(const std::string& id, const std::string& staging,
                              const std::string& target,
                              const v1::VolumeCapability& cap = mount_cap(),
                              bool readonly = false);
  grpc::Status unpublish_status(const std::string& id, const std::string& target);
  ::testing::AssertionResult controller_expand(const std::string& id, uint64_t bytes,
                                               v1::ControllerExpandVolumeResponse* out = nullptr);
  ::testing::AssertionResult node_expand(const std::string& id, const std::string& volume_path,
                                         const std::string& staging,
                                         v1::NodeExpandVolumeResponse* out = nullptr);

  /// Seconds a call may take (stage formats a filesystem; a snapshot copies an image).
  std::chrono::seconds timeout{60};

private:
  template <class Stub, class Req, class Resp>
  grpc::Status invoke(Stub& stub, const char* service,
                      grpc::Status (Stub::*fn)(grpc::ClientContext*, const Req&, Resp*),
                      const Req& req, Resp& resp) {
    grpc::ClientContext ctx;
    ctx.set_deadline(std::chrono::system_clock::now() + timeout);
    resp.Clear();
    last_call_ = std::string(service) + "." + Req::descriptor()->name();
    auto pos = last_call_.rfind("Request");
    if (pos != std::string::npos) {
      last_call_.erase(pos);
    }
    last_call_ += "(" + req.ShortDebugString() + ")";
    auto st = (stub.*fn)(&ctx, req, &resp);
    last_status_ = st;
    return st;
  }

  std::unique_ptr<berthd_process> berthd_;
  std::shared_ptr<grpc::Channel> channel_;
  std::unique_ptr<Ident> ident_;
  std::unique_ptr<Ctrl> ctrl_;
  std::unique_ptr<Node> node_;
  std::string last_call_;
  grpc::Status last_status_;
};

#define EXPECT_RPC(code, expr) EXPECT_TRUE(code_is(::grpc::StatusCode::code, (expr)))
#define ASSERT_RPC(code, expr) ASSERT_TRUE(code_is(::grpc::StatusCode::code, (expr)))

} // namespace berth::csi_test
