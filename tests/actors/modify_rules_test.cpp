// The merge rules of the coalescing mailbox (actors/modify_rules), without actors.

#include "actors/modify_rules.hpp"

#include <gtest/gtest.h>

#include "core/errors.hpp"

using namespace berth;

namespace {

constexpr uint64_t mib = 1024 * 1024;

volume_record volume_of(uint64_t bytes, option_map params = {}) {
  volume_record rec;
  rec.name = "pvc-1";
  rec.capacity_bytes = bytes;
  rec.mutable_parameters = std::move(params);
  return rec;
}

modification change(uint64_t bytes, option_map params = {}) {
  modification m;
  m.bytes = bytes;
  m.parameters = std::move(params);
  return m;
}

uint8_t code_of(ec x) {
  return static_cast<uint8_t>(x);
}

} // namespace

TEST(modify_rules, outstanding_keeps_only_what_the_volume_lacks) {
  auto rec = volume_of(20 * mib, {{"readAheadKB", "256"}});
  EXPECT_TRUE(is_empty(outstanding(rec, change(20 * mib, {{"readAheadKB", "256"}}))));
  EXPECT_TRUE(is_empty(outstanding(rec, change(10 * mib)))) << "smaller is no size change";
  auto left = outstanding(rec, change(30 * mib, {{"readAheadKB", "256"}, {"directIO", "true"}}));
  EXPECT_EQ(left.bytes, 30 * mib);
  EXPECT_EQ(left.parameters, (option_map{{"directIO", "true"}}));
}

TEST(modify_rules, a_shrink_is_out_of_range_naming_both_sizes) {
  auto err = check_shrink(volume_of(20 * mib), 10 * mib);
  ASSERT_TRUE(err);
  EXPECT_EQ(err.code(), code_of(ec::out_of_range));
  EXPECT_NE(describe(err).find(std::to_string(10 * mib)), std::string::npos);
  EXPECT_NE(describe(err).find(std::to_string(20 * mib)), std::string::npos);
  EXPECT_FALSE(check_shrink(volume_of(20 * mib), 20 * mib));
  EXPECT_FALSE(check_shrink(volume_of(20 * mib), 0)) << "no size asked";
}

TEST(modify_rules, equal_sizes_and_values_merge_and_others_conflict) {
  auto window = change(20 * mib, {{"readAheadKB", "256"}});
  EXPECT_FALSE(check_conflict("pvc-1", window, change(20 * mib), change(20 * mib)));
  EXPECT_FALSE(check_conflict("pvc-1", window, change(0, {{"directIO", "true"}}),
                              change(0, {{"directIO", "true"}})));
  auto size = check_conflict("pvc-1", window, change(30 * mib), change(30 * mib));
  ASSERT_TRUE(size);
  EXPECT_EQ(size.code(), code_of(ec::aborted));
  EXPECT_NE(describe(size).find(std::to_string(30 * mib)), std::string::npos);
  EXPECT_NE(describe(size).find(std::to_string(20 * mib)), std::string::npos);
  // The volume has readAheadKB=128 already: nothing outstanding, but the window
  // would overwrite it, so the request conflicts all the same.
  auto value = check_conflict("pvc-1", window, change(0), change(0, {{"readAheadKB", "128"}}));
  ASSERT_TRUE(value);
  EXPECT_NE(describe(value).find("readAheadKB=128"), std::string::npos) << describe(value);
  EXPECT_NE(describe(value).find("readAheadKB=256"), std::string::npos) << describe(value);
}

TEST(modify_rules, a_size_the_volume_already_has_does_not_conflict_with_a_larger_one) {
  auto window = change(30 * mib);
  EXPECT_FALSE(check_conflict("pvc-1", window, change(0), change(20 * mib)));
}

TEST(modify_rules, merge_unites_parameters_and_takes_the_size) {
  auto window = change(0, {{"readAheadKB", "256"}});
  merge_into(window, change(20 * mib, {{"directIO", "true"}}));
  EXPECT_EQ(window.bytes, 20 * mib);
  EXPECT_EQ(window.parameters, (option_map{{"readAheadKB", "256"}, {"directIO", "true"}}));
  merge_into(window, change(0));
  EXPECT_EQ(window.bytes, 20 * mib) << "a request without a size keeps the merged one";
}

TEST(modify_rules, applying_sets_size_and_parameters_and_counts_one_modification) {
  auto rec = apply_modification(volume_of(10 * mib, {{"directIO", "false"}}),
                                change(20 * mib, {{"directIO", "true"}}));
  EXPECT_EQ(rec.capacity_bytes, 20 * mib);
  EXPECT_EQ(rec.mutable_parameters, (option_map{{"directIO", "true"}}));
  EXPECT_EQ(rec.modifications, 1u);
  rec = apply_modification(rec, change(0, {{"readAheadKB", "64"}}));
  EXPECT_EQ(rec.capacity_bytes, 20 * mib) << "no size: unchanged";
  EXPECT_EQ(rec.modifications, 2u);
}
