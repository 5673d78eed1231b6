#pragma once

// A started fake_apiserver and a kube_client configured from its kubeconfig.

#include <chrono>
#include <memory>

#include <gtest/gtest.h>

#include "core/errors.hpp"
#include "protocols/kube/kube_client.hpp"
#include "tests/protocols/kube/fake_apiserver.hpp"

namespace berth::test {

inline std::chrono::steady_clock::time_point in(std::chrono::milliseconds ms) {
  return std::chrono::steady_clock::now() + ms;
}

/// The client for `cfg`; fails the test when it cannot be built.
inline std::unique_ptr<kube::kube_client> client_for(kube::kube_config cfg) {
  auto c = kube::kube_client::make(std::move(cfg));
  if (!c) {
    ADD_FAILURE() << describe(c.error());
    return nullptr;
  }
  return std::move(*c);
}

class kube_fixture : public ::testing::Test {
protected:
  void SetUp() override {
    api.start();
    auto cfg = kube::kubeconfig_config(api.kubeconfig_path());
    ASSERT_TRUE(cfg) << describe(cfg.error());
    config = *cfg;
    client = client_for(config);
    ASSERT_TRUE(client);
  }

  fake_apiserver api;
  kube::kube_config config;
  std::unique_ptr<kube::kube_client> client;
};

} // namespace berth::test
