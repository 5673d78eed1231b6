#pragma once

// What the registry's tests share: a registry on the fake backend and persistence,
// and CSI specs.

#include <chrono>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "actors/registry.hpp"
#include "tests/actors/fakes.hpp"

namespace berth::test {

using namespace std::chrono_literals;

class registry_test : public ::testing::Test {
protected:
  test::test_system ts;
  std::shared_ptr<test::fake_backend> storage = std::make_shared<test::fake_backend>();
  std::shared_ptr<test::fake_disk> disk = std::make_shared<test::fake_disk>();
  std::shared_ptr<executor> exec = std::make_shared<executor>(4, 64);
  caf::scoped_actor self{*ts.sys};
  registry_actor reg;
  /// What the volumes count into; null: each counts into a private one.
  std::shared_ptr<telemetry> stats;
  /// The host's mount points; set before start(), loaded volumes reconcile with them.
  std::shared_ptr<const std::set<std::string>> host_mounts;

  void start(std::vector<volume_record> initial = {}, std::chrono::milliseconds timeout = 1s) {
    registry_config cfg;
    cfg.backends["local"] = storage;
    cfg.exec = exec;
    cfg.persistence = ts.sys->spawn(test::fake_persistence, disk);
    cfg.backend_timeout = timeout;
    cfg.host_mounts = host_mounts;
    cfg.stats = stats;
    reg = ts.sys->spawn(registry, cfg, share(std::move(initial)));
  }

  void TearDown() override {
    storage->release();
    self->send_exit(reg, caf::exit_reason::user_shutdown);
    exec->stop();
  }

  /// Returns once the actor of each volume in `names` has started: each answers a get
  /// itself (a list answers from the record directory, without asking them).
  void wait_started(const std::vector<std::string>& names) {
    for (const auto& name : names) {
      self->request(reg, 5s, atom::get_v, name)
        .receive([](volume_record&) {},
                 [&](caf::error& err) { ADD_FAILURE() << name << ": " << describe(err); });
    }
  }

  std::vector<volume_record> list() {
    std::vector<volume_record> out;
    self->request(reg, 5s, atom::list_v)
      .receive([&](shared_records& xs) { out = copies(xs); },
               [&](caf::error& err) { ADD_FAILURE() << describe(err); });
    return out;
  }
};

inline constexpr uint64_t mib = test::fake_backend::mib;

inline volume_spec csi_spec(uint64_t required, const content_source& source = {}) {
  volume_spec spec;
  spec.backend = "local";
  spec.required_bytes = required;
  spec.source = source;
  return spec;
}

inline volume_spec snapshot_of(const std::string& volume) {
  volume_spec spec;
  spec.kind = record_kind::snapshot;
  spec.backend = "local";
  spec.source = volume_source(volume);
  return spec;
}

inline uint8_t code_of(ec x) {
  return static_cast<uint8_t>(x);
}


} // namespace berth::test
