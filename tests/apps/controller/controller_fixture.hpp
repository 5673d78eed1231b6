#pragma once

// berthd controller's RPCs and a node agent over one API held in memory: the agent's
// fixture (node n1), with the controller's stores and services on the same API.

#include <memory>
#include <string>

#include <grpcpp/grpcpp.h>

#include "apps/controller/cluster_services.hpp"
#include "apps/controller/snapshot_store.hpp"
#include "apps/controller/volume_store.hpp"
#include "tests/protocols/kube/agent/node_agent_fixture.hpp"

namespace berth::test {

class controller_agent_test : public node_agent_test {
protected:
  std::unique_ptr<controller::volume_store> store;
  std::unique_ptr<controller::snapshot_store> snapshots;
  std::unique_ptr<controller::cluster_controller> rpc;

  void SetUp() override {
    node_agent_test::SetUp(); // makes the API the controller shares
    store = std::make_unique<controller::volume_store>(*api);
    snapshots = std::make_unique<controller::snapshot_store>(*api);
    csi::codec_env env;
    env.backends = {"local"}; // the fake backend the agent's registry has
    env.default_backend = "local";
    rpc = std::make_unique<controller::cluster_controller>(*store, *snapshots, env);
  }

  grpc::Status delete_volume(const std::string& csi_name) {
    grpc::ServerContext ctx;
    controller::v1::DeleteVolumeRequest req;
    req.set_volume_id(csi_name);
    controller::v1::DeleteVolumeResponse resp;
    return rpc->DeleteVolume(&ctx, &req, &resp);
  }
};

} // namespace berth::test
