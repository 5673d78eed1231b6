#pragma once

// The fixture of the volume actor's CSI tests (volume_csi_test.cpp,
// volume_csi_publish_test.cpp): a volume actor on the fake backend and persistence of
// tests/actors/fakes.hpp, and helpers that send it CSI messages; the requests themselves
// (csi_spec, csi_stage, csi_publish) serve volume_csi_driver_test.cpp too.

#include <gtest/gtest.h>

#include "actors/volume.hpp"
#include "core/errors.hpp"
#include "core/limits.hpp"
#include "tests/actors/csi_requests.hpp"
#include "tests/actors/fakes.hpp"

namespace berth::test {

using namespace std::chrono_literals;

constexpr uint64_t mib = test::fake_backend::mib;

inline uint8_t code_of(ec x) {
  return static_cast<uint8_t>(x);
}

/// The CSI requests these tests send volume pvc-1: an ext4 block volume, staged at
/// /stage/pvc-1, published to `target`.
inline volume_spec csi_spec(uint64_t required, uint64_t limit = 0) {
  volume_spec out;
  out.backend = "local";
  out.parameters = {{"fsType", "ext4"}};
  out.required_bytes = required;
  out.limit_bytes = limit;
  return out;
}

inline stage_request csi_stage(const std::string& path = "/stage/pvc-1") {
  stage_request req;
  req.staging_path = path;
  req.flags = {"noatime"};
  return req;
}

class volume_csi_test : public test::volume_fixture {
protected:
  /// Longer than any hang in these tests, which are about order, not timeouts.
  std::chrono::milliseconds backend_timeout = 3s;

  void SetUp() override {
    spawn_volume("pvc-1", backend_timeout);
  }

  static volume_spec spec(uint64_t required, uint64_t limit = 0) {
    return csi_spec(required, limit);
  }

  static stage_request stage_req(const std::string& path = "/stage/pvc-1") {
    return csi_stage(path);
  }

  static publish_request publish_req(const std::string& target, bool readonly = false) {
    return csi_publish(target, readonly);
  }

  volume_record create(uint64_t required = 10 * mib) {
    auto rec = test::ask<volume_record>(self, vol, atom::create_v, spec(required));
    EXPECT_TRUE(rec) << describe(rec.error());
    return rec ? *rec : volume_record{};
  }

  caf::error stage(const std::string& path = "/stage/pvc-1") {
    return test::call<atom::ok>(self, vol, atom::stage_v, stage_req(path));
  }

  caf::error unstage(const std::string& path = "/stage/pvc-1") {
    return test::call<atom::ok>(self, vol, atom::unstage_v, path);
  }

  caf::error publish(const std::string& target, bool readonly = false) {
    return test::call<atom::ok>(self, vol, atom::publish_v, publish_req(target, readonly));
  }

  caf::error unpublish(const std::string& target) {
    return test::call<atom::ok>(self, vol, atom::unpublish_v, target);
  }
};

/// A backend timeout short enough to let calls outlive it.
} // namespace berth::test
