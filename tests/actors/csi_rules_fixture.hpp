#pragma once

// The records and requests the CSI rules' tests (csi_rules_test, csi_rules_node_test) check
// against, and how they expect an error.

#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "actors/csi_rules.hpp"
#include "core/errors.hpp"
#include "tests/actors/csi_requests.hpp"

namespace berth::test {

constexpr uint64_t mib = 1024 * 1024;

inline uint8_t code_of(ec x) {
  return static_cast<uint8_t>(x);
}

/// A block volume of 10 MiB with fsType ext4, neither staged nor published.
inline volume_record block_volume() {
  volume_record rec;
  rec.name = "pvc-1";
  rec.kind = record_kind::volume;
  rec.backend = "block";
  rec.options = {{"fsType", "ext4"}};
  rec.capacity_bytes = 10 * mib;
  return rec;
}

/// The spec that created block_volume().
inline volume_spec block_spec() {
  volume_spec spec;
  spec.kind = record_kind::volume;
  spec.backend = "block";
  spec.parameters = {{"fsType", "ext4"}};
  spec.required_bytes = 10 * mib;
  return spec;
}

inline stage_request stage_at(const std::string& path, std::vector<std::string> flags = {}) {
  stage_request req;
  req.staging_path = path;
  req.flags = std::move(flags);
  return req;
}

inline volume_record staged_volume() {
  auto rec = block_volume();
  set_staged(rec, stage_at("/stage/pvc-1", {"noatime"}), "/dev/loop3");
  return rec;
}

/// Expects `err` to carry `code` and a message containing `needle`.
inline void expect_error(const caf::error& err, ec code, const std::string& needle) {
  ASSERT_TRUE(err) << "expected " << to_string(code);
  EXPECT_EQ(err.code(), code_of(code)) << describe(err);
  EXPECT_NE(describe(err).find(needle), std::string::npos)
    << "\"" << describe(err) << "\" does not name \"" << needle << "\"";
}

template <class T>
void expect_error(const caf::expected<T>& x, ec code, const std::string& needle) {
  ASSERT_FALSE(x) << "expected " << to_string(code);
  expect_error(x.error(), code, needle);
}

} // namespace berth::test
