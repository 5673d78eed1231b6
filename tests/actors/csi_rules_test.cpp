#include "actors/csi_rules.hpp"

#include <gtest/gtest.h>

#include "actors/volume_rules.hpp"
#include "core/errors.hpp"
#include "core/limits.hpp"

using namespace berth;

namespace {

constexpr uint64_t mib = 1024 * 1024;

uint8_t code_of(ec x) {
  return static_cast<uint8_t>(x);
}

/// A block volume of 10 MiB with fsType ext4, neither staged nor published.
volume_record block_volume() {
  volume_record rec;
  rec.name = "pvc-1";
  rec.kind = record_kind::volume;
  rec.backend = "block";
  rec.options = {{"fsType", "ext4"}};
  rec.capacity_bytes = 10 * mib;
  return rec;
}

/// The spec that created block_volume().
volume_spec block_spec() {
  volume_spec spec;
  spec.kind = record_kind::volume;
  spec.backend = "block";
  spec.parameters = {{"fsType", "ext4"}};
  spec.required_bytes = 10 * mib;
  return spec;
}

stage_request stage_at(const std::string& path, std::vector<std::string> flags = {}) {
  stage_request req;
  req.staging_path = path;
  req.flags = std::move(flags);
  return req;
}

volume_record staged_volume() {
  auto rec = block_volume();
  set_staged(rec, stage_at("/stage/pvc-1", {"noatime"}), "/dev/loop3");
  return rec;
}

publish_request publish_at(const std::string& target, bool readonly = false) {
  publish_request req;
  req.target = target;
  req.staging_path = "/stage/pvc-1";
  req.how.readonly = readonly;
  return req;
}

/// Expects `err` to carry `code` and a message containing `needle`.
void expect_error(const caf::error& err, ec code, const std::string& needle) {
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

} // namespace

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

// -- stage / unstage ---------------------------------------------------------------

TEST(csi_rules, stage_of_an_unstaged_volume_runs) {
  auto action = check_stage(block_volume(), stage_at("/stage/pvc-1"));
  ASSERT_TRUE(action);
  EXPECT_EQ(*action, csi_action::run);
}

TEST(csi_rules, stage_at_the_same_path_the_same_way_is_done) {
  auto action = check_stage(staged_volume(), stage_at("/stage/pvc-1", {"noatime"}));
  ASSERT_TRUE(action) << describe(action.error());
  EXPECT_EQ(*action, csi_action::done);
}

TEST(csi_rules, stage_at_the_same_path_another_way_already_exists) {
  expect_error(check_stage(staged_volume(), stage_at("/stage/pvc-1", {"ro"})),
               ec::already_exists, "noatime");
  auto block = stage_at("/stage/pvc-1");
  block.block = true;
  expect_error(check_stage(staged_volume(), block), ec::already_exists, "/stage/pvc-1");
}

TEST(csi_rules, stage_at_another_path_is_a_failed_precondition) {
  expect_error(check_stage(staged_volume(), stage_at("/stage/other", {"noatime"})),
               ec::failed_precondition, "/stage/other");
}

TEST(csi_rules, a_snapshot_cannot_be_staged_or_published) {
  auto snap = block_volume();
  snap.kind = record_kind::snapshot;
  expect_error(check_stage(snap, stage_at("/stage/pvc-1")), ec::not_found, "snapshot");
  expect_error(check_publish(snap, publish_at("/pods/a")), ec::not_found, "snapshot");
  expect_error(check_volume_path(snap, "/stage/pvc-1"), ec::not_found, "snapshot");
}

TEST(csi_rules, set_staged_and_set_unstaged_fill_and_clear_the_staging_fields) {
  auto rec = staged_volume();
  EXPECT_EQ(rec.staging_path, "/stage/pvc-1");
  EXPECT_EQ(rec.stage_flags, std::vector<std::string>{"noatime"});
  EXPECT_EQ(rec.device, "/dev/loop3");
  EXPECT_FALSE(rec.staged_block);
  EXPECT_TRUE(in_csi_use(rec));
  set_unstaged(rec);
  EXPECT_EQ(rec, block_volume());
}

TEST(csi_rules, unstage_when_not_staged_or_staged_elsewhere_sweeps) {
  // A stage that landed after its caller gave up may have left a mount the record lacks.
  auto none = check_unstage(block_volume(), "/stage/pvc-1");
  ASSERT_TRUE(none);
  EXPECT_EQ(*none, csi_action::sweep);
  auto elsewhere = check_unstage(staged_volume(), "/stage/other");
  ASSERT_TRUE(elsewhere);
  EXPECT_EQ(*elsewhere, csi_action::sweep);
  auto snapshot = block_volume();
  snapshot.kind = record_kind::snapshot;
  auto never = check_unstage(snapshot, "/stage/pvc-1");
  ASSERT_TRUE(never);
  EXPECT_EQ(*never, csi_action::done) << "a snapshot is never staged";
  auto here = check_unstage(staged_volume(), "/stage/pvc-1");
  ASSERT_TRUE(here);
  EXPECT_EQ(*here, csi_action::run);
}

TEST(csi_rules, unstage_while_published_is_a_failed_precondition) {
  auto rec = staged_volume();
  rec.published["/pods/a"] = publication{};
  expect_error(check_unstage(rec, "/stage/pvc-1"), ec::failed_precondition, "/pods/a");
}

// -- publish / unpublish --------------------------------------------------------------

TEST(csi_rules, publish_before_stage_is_a_failed_precondition) {
  expect_error(check_publish(block_volume(), publish_at("/pods/a")), ec::failed_precondition,
               "not staged");
}

TEST(csi_rules, publish_with_another_staging_path_is_a_failed_precondition) {
  auto req = publish_at("/pods/a");
  req.staging_path = "/stage/other";
  expect_error(check_publish(staged_volume(), req), ec::failed_precondition, "/stage/other");
}

TEST(csi_rules, publish_block_of_a_mount_staging_and_back_is_a_failed_precondition) {
  auto block_req = publish_at("/pods/dev");
  block_req.how.block = true;
  expect_error(check_publish(staged_volume(), block_req), ec::failed_precondition, "block");
  auto block_staged = block_volume();
  auto req = stage_at("/stage/pvc-1");
  req.block = true;
  set_staged(block_staged, req, "/dev/loop3");
  expect_error(check_publish(block_staged, publish_at("/pods/a")), ec::failed_precondition,
               "mount");
  auto ok = check_publish(block_staged, block_req);
  ASSERT_TRUE(ok) << describe(ok.error());
  EXPECT_EQ(*ok, csi_action::run);
}

TEST(csi_rules, publish_at_a_new_target_runs_at_the_same_target_is_done) {
  auto rec = staged_volume();
  auto first = check_publish(rec, publish_at("/pods/a"));
  ASSERT_TRUE(first) << describe(first.error());
  EXPECT_EQ(*first, csi_action::run);
  rec.published["/pods/a"] = publish_at("/pods/a").how;
  auto again = check_publish(rec, publish_at("/pods/a"));
  ASSERT_TRUE(again) << describe(again.error());
  EXPECT_EQ(*again, csi_action::done);
  auto other = check_publish(rec, publish_at("/pods/b"));
  ASSERT_TRUE(other);
  EXPECT_EQ(*other, csi_action::run) << "a second target is another publication";
}

// limits::max_targets bounds the publications one record holds (records stay bounded).
TEST(csi_rules, publish_beyond_max_targets_is_resource_exhausted) {
  auto rec = staged_volume();
  for (size_t i = 0; i + 1 < limits::max_targets; ++i) {
    rec.published["/pods/" + std::to_string(i)] = publish_at("/pods/x").how;
  }
  auto last = check_publish(rec, publish_at("/pods/last"));
  ASSERT_TRUE(last) << describe(last.error());
  EXPECT_EQ(*last, csi_action::run) << "the target that reaches the bound is accepted";
  rec.published["/pods/last"] = publish_at("/pods/last").how;
  ASSERT_EQ(rec.published.size(), limits::max_targets);
  expect_error(check_publish(rec, publish_at("/pods/over")), ec::resource_exhausted,
               std::to_string(limits::max_targets));
  auto again = check_publish(rec, publish_at("/pods/last"));
  ASSERT_TRUE(again) << describe(again.error());
  EXPECT_EQ(*again, csi_action::done) << "a target already published stays idempotent";
}

TEST(csi_rules, a_repeated_publish_is_done_whoever_created_the_target) {
  auto rec = staged_volume();
  auto made = publish_at("/pods/a").how;
  made.created = true; // what the record keeps; a request never carries it
  rec.published["/pods/a"] = made;
  auto again = check_publish(rec, publish_at("/pods/a"));
  ASSERT_TRUE(again) << describe(again.error());
  EXPECT_EQ(*again, csi_action::done);
}

TEST(csi_rules, staged_as_stages_again_with_the_fs_type_of_the_stage) {
  auto rec = block_volume();
  auto req = stage_at("/stage/pvc-1", {"noatime"});
  req.fs_type = "xfs"; // the volume's parameter says ext4
  set_staged(rec, req, "/dev/loop3");
  EXPECT_EQ(rec.stage_fs_type, "xfs");
  auto again = staged_as(rec);
  EXPECT_EQ(again.fs_type, "xfs");
  EXPECT_EQ(again.staging_path, "/stage/pvc-1");
  EXPECT_EQ(again.flags, (std::vector<std::string>{"noatime"}));
  set_unstaged(rec);
  EXPECT_TRUE(rec.stage_fs_type.empty());
}

TEST(csi_rules, stage_with_another_fs_type_than_the_recorded_already_exists) {
  auto rec = block_volume();
  auto req = stage_at("/stage/pvc-1");
  req.fs_type = "xfs";
  set_staged(rec, req, "/dev/loop3");
  auto same = check_stage(rec, req);
  ASSERT_TRUE(same) << describe(same.error());
  EXPECT_EQ(*same, csi_action::done);
  req.fs_type = "ext4";
  expect_error(check_stage(rec, req), ec::already_exists, "xfs");
}

TEST(csi_rules, publish_at_the_same_target_another_way_already_exists) {
  auto rec = staged_volume();
  rec.published["/pods/a"] = publish_at("/pods/a").how;
  expect_error(check_publish(rec, publish_at("/pods/a", true)), ec::already_exists,
               "not mount ro");
  auto flagged = publish_at("/pods/a");
  flagged.how.flags = {"nosuid"};
  expect_error(check_publish(rec, flagged), ec::already_exists, "nosuid");
}

TEST(csi_rules, unpublish_runs_for_a_published_target_and_sweeps_an_unrecorded_one) {
  auto rec = staged_volume();
  rec.published["/pods/a"] = publication{};
  EXPECT_EQ(check_unpublish(rec, "/pods/a"), csi_action::run);
  // A publish that landed after its caller gave up may have left a mount the record lacks.
  EXPECT_EQ(check_unpublish(rec, "/pods/b"), csi_action::sweep);
  EXPECT_EQ(check_unpublish(block_volume(), "/pods/a"), csi_action::sweep);
  auto snapshot = block_volume();
  snapshot.kind = record_kind::snapshot;
  EXPECT_EQ(check_unpublish(snapshot, "/pods/a"), csi_action::done) << "never published";
}

// -- paths ----------------------------------------------------------------------

TEST(csi_rules, a_volume_path_is_the_staging_path_or_a_published_target) {
  auto rec = staged_volume();
  rec.published["/pods/a"] = publication{};
  EXPECT_FALSE(check_volume_path(rec, "/stage/pvc-1"));
  EXPECT_FALSE(check_volume_path(rec, "/pods/a"));
  expect_error(check_volume_path(rec, "/pods/b"), ec::not_found, "/pods/b");
  expect_error(check_volume_path(rec, ""), ec::not_found, "pvc-1");
  // An unstaged volume's empty staging path must not match an empty request.
  expect_error(check_volume_path(block_volume(), ""), ec::not_found, "pvc-1");
}

// -- remove (actors/volume_rules) ---------------------------------------------------------

TEST(csi_rules, remove_is_refused_while_staged_or_published) {
  expect_error(check_remove(staged_volume()), ec::in_use, "/stage/pvc-1");
  auto published = block_volume();
  published.published["/pods/a"] = publication{};
  expect_error(check_remove(published), ec::in_use, "/pods/a");
  EXPECT_FALSE(check_remove(block_volume()));
}
