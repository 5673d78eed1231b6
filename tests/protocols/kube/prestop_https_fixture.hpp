#pragma once

// What the tests of the hook's wait over real HTTPS share: the drain tests' fixture (the
// admin stand-in for the local berthd, the captured log) plus a started fake_apiserver,
// and the client made from its kubeconfig the way `berthd prestop` makes it.

#include <chrono>
#include <memory>

#include <gtest/gtest.h>

#include "protocols/kube/kube_factory.hpp"
#include "tests/apps/prestop/prestop_fixture.hpp"
#include "tests/protocols/kube/kube_fixture.hpp"

namespace berth::test {

class prestop_https_test : public prestop_fixture {
protected:
  void SetUp() override {
    prestop_fixture::SetUp();
    api.start();
    auto parsed = kube::kubeconfig_config(api.kubeconfig_path());
    ASSERT_TRUE(parsed) << describe(parsed.error());
    config = *parsed;
  }

  void TearDown() override {
    // Ends the watch a worker of the hook may still be in, so that prestop_fixture can
    // wait for it to leave.
    api.stop();
    prestop_fixture::TearDown();
  }

  /// The client as `berthd prestop --kubeconfig FILE` makes it (kube::make_kube_api),
  /// tracked so that TearDown waits for the hook's workers to drop it.
  std::shared_ptr<kube::kube_api> client() {
    auto made = kube::make_kube_api(api.kubeconfig_path());
    if (!made) {
      ADD_FAILURE() << describe(made.error());
      return nullptr;
    }
    return tracked(std::shared_ptr<kube::kube_api>{std::move(*made)});
  }

  /// A client for `config` as the test edited it (a wrong token, say).
  std::shared_ptr<kube::kube_api> client_for_config() {
    return tracked(std::shared_ptr<kube::kube_api>{client_for(config)});
  }

  /// Cordons node n1 on the stand-in (spec.unschedulable: true).
  void cordon_over_https() {
    api.set_node("n1", {true, true, {}});
  }

  /// Runs the hook's wait against the stand-in.
  drain::prestop_outcome run_over_https() {
    return drain::wait_for_drain(cfg, client());
  }

  fake_apiserver api;
  kube::kube_config config;
};

} // namespace berth::test
