#pragma once

// A cluster on one machine: a Kubernetes API server (tests/kube_apiserver/api_server.py: a
// real kube-apiserver on etcd when $BERTH_KUBE_APISERVER and $BERTH_ETCD name them, else the
// stand-in), two berthd nodes in the cluster mode (`berthd --kubernetes`, nodes n1 and n2,
// each with its own state and kubelet directory) and `berthd controller`, all real
// processes; CSI over their sockets, the objects read through berth's own Kubernetes client
// as an administrator. The nodes and the controller use their own ServiceAccounts' tokens,
// so on a real server the manifests' RBAC holds them: each test fails when the server
// forbade any of their requests (its audit log says).

#include <chrono>
#include <cstdint>
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

inline constexpr int64_t mib = 1 << 20;

/// How a suite's cluster differs from the default one.
struct cluster_options {
  /// On the stand-in, each status write answers this long after it is applied (its watch
  /// events go out at once), as a real server's slower writes do. 0 for none.
  int status_write_latency_ms = 0;
};

class cluster : public ::testing::Test {
protected:
  static void SetUpTestSuite() {
    start_cluster({});
  }
  static void TearDownTestSuite();
  void SetUp() override;
  void TearDown() override;

  /// Starts the API server, the nodes and the controller; on failure missing() says why.
  static void start_cluster(const cluster_options& opts);

  /// Whether the API server is a real kube-apiserver.
  static bool real_server();

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

/// The cluster whose stand-in answers each status write 100 ms late (a real server runs
/// without it: its own latency is the real one).
class cluster_with_slow_status_writes : public cluster {
protected:
  static void SetUpTestSuite() {
    start_cluster({100});
  }
};

} // namespace berth::cluster_test
