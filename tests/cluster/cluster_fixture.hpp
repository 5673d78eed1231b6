#pragma once

// A cluster on one machine: the Kubernetes API server stand-in, two berthd nodes in the
// cluster mode (`berthd --kubernetes`, nodes n1 and n2, each with its own state and kubelet
// directory) and `berthd controller`, all real processes; CSI over their sockets, the
// objects read through berth's own Kubernetes client.

#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>

#include "protocols/kube/berth_objects.hpp"
#include "protocols/kube/object_api.hpp"
#include "tests/cluster/child_process.hpp"
#include "tests/csi/berthd_process.hpp"

#include "csi.grpc.pb.h"

namespace berth::cluster_test {

namespace v1 = ::csi::v1;

class cluster : public ::testing::Test {
protected:
  static void SetUpTestSuite();
  static void TearDownTestSuite();
  void SetUp() override;

  /// Why the suite cannot run ("" when it can).
  static std::string& missing();

  static std::unique_ptr<grpc::ClientContext> call(std::chrono::seconds limit = std::chrono::seconds(30));

  static v1::Controller::Stub& controller();
  static v1::Node::Stub& node(int n); ///< n = 1 or 2
  static csi_test::berthd_process& berthd(int n);
  static kube::object_api& api();

  /// A CreateVolumeRequest for a mount volume of `bytes` on the block backend, placed on
  /// `node` ("" for no requirement).
  static v1::CreateVolumeRequest create_request(const std::string& name, int64_t bytes,
                                                const std::string& node);

  /// The BerthVolume of the CSI name `csi_name`, or nullopt.
  static std::optional<kube::volume_object> object_of(const std::string& csi_name);

  /// Waits up to `limit` until `done()` holds.
  static bool eventually(const std::function<bool()>& done,
                         std::chrono::seconds limit = std::chrono::seconds(20));

  /// The log of the controller and of both nodes, for a failure message.
  static std::string logs();

  static std::string root_;
};

} // namespace berth::cluster_test
