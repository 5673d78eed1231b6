// The CSI rules of the controller side (actors/csi_rules.hpp): an idempotent create, a copy's
// size, and a remove. The node side's (stage, publish, their paths) are csi_rules_node_test.

#include "actors/csi_rules.hpp"

#include <gtest/gtest.h>

#include "actors/volume_rules.hpp"
#include "core/errors.hpp"
#include "core/limits.hpp"
#include "tests/actors/csi_rules_fixture.hpp"

using namespace berth;
using namespace berth::test;

// -- check_csi_recreate ------------------------------------------------------------

TEST(csi_rules, recreate_with_the_same_spec_is_accepted) {
  EXPECT_FALSE(check_csi_recreate(block_volume(), block_spec()));
  auto range = block_spec();
  range.required_bytes = 5 * mib;
  range.limit_bytes = 10 * mib;
  EXPECT_FALSE(check_csi_recreate(block_volume(), range)) << "capacity inside the range";
  auto unset = block_spec();
  unset.required_bytes = 0;
  EXPECT_FALSE(check_csi_recreate(block_volume(), unset)) << "no range at all";
}

TEST(csi_rules, recreate_with_another_kind_backend_source_or_parameters_already_exists) {
  auto kind = block_spec();
  kind.kind = record_kind::snapshot;
  expect_error(check_csi_recreate(block_volume(), kind), ec::already_exists, "kind volume");
  auto backend = block_spec();
  backend.backend = "local";
  expect_error(check_csi_recreate(block_volume(), backend), ec::already_exists, "backend block");
  auto source = block_spec();
  source.source = snapshot_source("s1");
  expect_error(check_csi_recreate(block_volume(), source), ec::already_exists, "snapshot:s1");
  auto params = block_spec();
  params.parameters["fsType"] = "xfs";
  expect_error(check_csi_recreate(block_volume(), params), ec::already_exists, "parameters");
  auto more = block_spec();
  more.parameters["extra"] = "1";
  expect_error(check_csi_recreate(block_volume(), more), ec::already_exists, "parameters");
}

TEST(csi_rules, recreate_with_a_capacity_outside_the_range_already_exists) {
  auto larger = block_spec();
  larger.required_bytes = 10 * mib + 1;
  expect_error(check_csi_recreate(block_volume(), larger), ec::already_exists,
               std::to_string(10 * mib));
  auto limited = block_spec();
  limited.required_bytes = 1 * mib;
  limited.limit_bytes = 10 * mib - 1;
  expect_error(check_csi_recreate(block_volume(), limited), ec::already_exists, "range");
}

TEST(csi_rules, recreate_of_a_snapshot_compares_its_source_only) {
  auto snap = block_volume();
  snap.kind = record_kind::snapshot;
  snap.source = volume_source("pvc-1");
  snap.options.clear();
  volume_spec spec;
  spec.kind = record_kind::snapshot;
  spec.backend = "block";
  spec.source = volume_source("pvc-1");
  EXPECT_FALSE(check_csi_recreate(snap, spec));
  spec.source = volume_source("pvc-2");
  expect_error(check_csi_recreate(snap, spec), ec::already_exists, "volume:pvc-2");
}

// -- with_source_size ----------------------------------------------------------------

TEST(csi_rules, an_unset_size_becomes_the_sources) {
  auto spec = block_spec();
  spec.source = snapshot_source("s1");
  spec.source_bytes = 32 * mib;
  spec.required_bytes = 0;
  auto out = with_source_size(spec);
  ASSERT_TRUE(out) << describe(out.error());
  EXPECT_EQ(out->required_bytes, 32 * mib);
  spec.required_bytes = 64 * mib;
  out = with_source_size(spec);
  ASSERT_TRUE(out);
  EXPECT_EQ(out->required_bytes, 64 * mib) << "a larger request stays";
}

TEST(csi_rules, a_request_smaller_than_its_source_is_out_of_range) {
  auto spec = block_spec();
  spec.source = snapshot_source("s1");
  spec.source_bytes = 32 * mib;
  spec.required_bytes = 16 * mib;
  expect_error(with_source_size(spec), ec::out_of_range, "snapshot:s1");
}

TEST(csi_rules, a_limit_below_the_source_is_out_of_range) {
  auto spec = block_spec();
  spec.source = volume_source("pvc-0");
  spec.source_bytes = 32 * mib;
  spec.required_bytes = 0;
  spec.limit_bytes = 16 * mib;
  expect_error(with_source_size(spec), ec::out_of_range, "limit");
}

TEST(csi_rules, without_a_source_or_for_a_snapshot_the_spec_is_unchanged) {
  auto plain = block_spec();
  plain.required_bytes = 0;
  auto out = with_source_size(plain);
  ASSERT_TRUE(out);
  EXPECT_EQ(out->required_bytes, 0u);
  volume_spec snap;
  snap.kind = record_kind::snapshot;
  snap.source = volume_source("pvc-1");
  snap.source_bytes = 32 * mib;
  out = with_source_size(snap);
  ASSERT_TRUE(out);
  EXPECT_EQ(out->required_bytes, 0u);
}

TEST(csi_rules, make_csi_record_takes_the_spec_and_the_chosen_capacity) {
  auto spec = block_spec();
  spec.source = snapshot_source("s1");
  auto rec = make_csi_record("pvc-9", spec, 12 * mib);
  EXPECT_EQ(rec.name, "pvc-9");
  EXPECT_EQ(rec.kind, record_kind::volume);
  EXPECT_EQ(rec.backend, "block");
  EXPECT_EQ(rec.options, spec.parameters);
  EXPECT_EQ(rec.source, snapshot_source("s1"));
  EXPECT_EQ(rec.capacity_bytes, 12 * mib);
  EXPECT_FALSE(rec.created_at.empty());
  EXPECT_FALSE(in_csi_use(rec));
}

// -- remove (actors/volume_rules) ---------------------------------------------------------

TEST(csi_rules, remove_is_refused_while_staged_or_published) {
  expect_error(check_remove(staged_volume()), ec::in_use, "/stage/pvc-1");
  auto published = block_volume();
  published.published["/pods/a"] = publication{};
  expect_error(check_remove(published), ec::in_use, "/pods/a");
  EXPECT_FALSE(check_remove(block_volume()));
}
