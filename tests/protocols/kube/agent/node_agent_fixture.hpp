#pragma once

// The node agent over an API held in memory (memory_objects) and a real registry on the
// fake backend: what lets a test hold one API call or one backend call and look at what
// the agent wrote meanwhile. The resync is 10 minutes, so nothing a test waits for can
// come from it.

#include <chrono>
#include <future>
#include <memory>
#include <optional>
#include <string>
#include <thread>

#include <gtest/gtest.h>

#include "actors/registry.hpp"
#include "core/errors.hpp"
#include "core/telemetry/telemetry.hpp"
#include "protocols/kube/agent/node_agent.hpp"
#include "protocols/kube/berth_objects.hpp"
#include "tests/actors/fakes.hpp"
#include "tests/protocols/kube/agent/memory_objects.hpp"

namespace berth::test {

using namespace std::chrono_literals;

class node_agent_test : public ::testing::Test {
protected:
  static constexpr uint64_t mib = fake_backend::mib;
  static constexpr const char* node = "n1";

  test_system ts;
  std::shared_ptr<fake_backend> storage = std::make_shared<fake_backend>();
  std::shared_ptr<fake_disk> disk = std::make_shared<fake_disk>();
  std::shared_ptr<executor> exec = std::make_shared<executor>(4, 64);
  registry_actor reg;
  /// Where the agent counts the unclaimed volumes.
  std::shared_ptr<telemetry> stats = std::make_shared<telemetry>(std::vector<std::string>{"local"});
  memory_objects* api = nullptr; ///< owned by the agent
  std::unique_ptr<kube::agent::node_agent> agent;

  void SetUp() override {
    registry_config cfg;
    cfg.backends["local"] = storage;
    cfg.exec = exec;
    cfg.persistence = ts.sys->spawn(fake_persistence, disk);
    cfg.coalesce_window = 100ms;
    reg = ts.sys->spawn(registry, cfg, shared_records{});
    auto objects = std::make_unique<memory_objects>();
    api = objects.get();
    ASSERT_TRUE(api->create_object(kube::nodes(), R"({"metadata":{"name":"n1"}})", far()));
    kube::agent::agent_config ac;
    ac.node = node;
    ac.default_backend = "local";
    ac.backends["local"] = storage;
    ac.resync = std::chrono::seconds(600);
    ac.workers = 4;
    ac.stats = stats;
    adjust(ac);
    agent = std::make_unique<kube::agent::node_agent>(*ts.sys, reg, std::move(objects), ac);
    agent->start();
  }

  /// A test's own settings of the agent, before it starts.
  virtual void adjust(kube::agent::agent_config&) {
  }

  void TearDown() override {
    storage->release();
    storage->release_modify();
    agent->stop();
    caf::anon_send_exit(reg, caf::exit_reason::user_shutdown);
    exec->stop();
  }

  static std::chrono::steady_clock::time_point far() {
    return std::chrono::steady_clock::now() + 10s;
  }

  /// Writes the BerthVolume of the CSI volume `csi_name` as the controller does; returns
  /// its object name.
  std::string add_volume(const std::string& csi_name, uint64_t bytes) {
    kube::volume_object_spec spec;
    spec.csi_name = csi_name;
    spec.node = node;
    spec.size_bytes = bytes;
    spec.access_type = "mount";
    auto name = kube::object_name_for(csi_name);
    auto made = api->create_object(kube::berth_volumes(), kube::volume_object_json(name, spec), far());
    EXPECT_TRUE(made) << describe(made.error());
    return name;
  }

  std::optional<kube::volume_object> volume(const std::string& name) {
    auto json = api->object(kube::berth_volumes().plural, name);
    if (!json) {
      return std::nullopt;
    }
    auto obj = kube::parse_volume_object(*json);
    return obj ? std::optional<kube::volume_object>{std::move(*obj)} : std::nullopt;
  }

  /// Sets spec.sizeBytes of `name` (a new generation).
  void resize(const std::string& name, uint64_t bytes) {
    auto now = volume(name);
    ASSERT_TRUE(now);
    auto res = api->merge_patch(kube::berth_volumes(), name, "",
                                kube::spec_patch(now->resource_version, bytes, {}, {}), far());
    ASSERT_TRUE(res) << describe(res.error());
  }

  /// True once `name`'s status answers its generation with phase Ready.
  bool ready(const std::string& name) {
    auto obj = volume(name);
    return obj && obj->status.phase == kube::phase_ready
           && obj->status.observed_generation == obj->generation;
  }

  /// The agent's answer to an operator's removal of the unclaimed `csi_name`.
  caf::error remove_unclaimed(const std::string& csi_name) {
    auto answered = std::make_shared<std::promise<caf::error>>();
    auto done = answered->get_future();
    agent->remove_unclaimed(csi_name,
                            [answered](caf::error err) { answered->set_value(std::move(err)); });
    if (done.wait_for(10s) != std::future_status::ready) {
      return make_error(ec::timeout, "the removal was never answered");
    }
    return done.get();
  }

  template <class Pred>
  static bool eventually(Pred pred, std::chrono::milliseconds bound = 10s) {
    auto until = std::chrono::steady_clock::now() + bound;
    while (std::chrono::steady_clock::now() < until) {
      if (pred()) {
        return true;
      }
      std::this_thread::sleep_for(10ms);
    }
    return pred();
  }
};

} // namespace berth::test
