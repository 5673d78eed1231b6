#include <gtest/gtest.h>

#include "core/errors.hpp"
#include "protocols/kube/agent/volume_intent.hpp"

namespace berth::kube::agent {
namespace {

TEST(volume_intent, the_spec_becomes_the_create_volume_it_stands_for) {
  volume_object_spec s;
  s.size_bytes = 100;
  s.limit_bytes = 200;
  s.parameters = {{"backend", "local"}, {"fsType", "ext4"}};
  s.mutable_parameters = {{"readAheadKB", "64"}};
  s.source_snapshot = "snap";
  auto req = create_request(s, "block");
  EXPECT_EQ(req.backend, "local");
  EXPECT_EQ(req.parameters, (option_map{{"fsType", "ext4"}}));
  EXPECT_EQ(req.required_bytes, 100u);
  EXPECT_EQ(req.limit_bytes, 200u);
  EXPECT_EQ(req.mutable_parameters.at("readAheadKB"), "64");
  EXPECT_EQ(req.source.kind, record_kind::snapshot);
  s.parameters.erase("backend");
  EXPECT_EQ(create_request(s, "block").backend, "block");
}

TEST(volume_intent, a_change_asks_only_what_was_not_asked_yet) {
  volume_object_spec s;
  s.size_bytes = 100;
  s.mutable_parameters = {{"a", "1"}, {"b", "2"}};
  EXPECT_FALSE(change_request(s, {100, {{"a", "1"}, {"b", "2"}}}));
  EXPECT_FALSE(change_request(s, {200, {{"a", "1"}, {"b", "2"}}})); // never a shrink
  auto grow = change_request(s, {50, {{"a", "1"}, {"b", "2"}}});
  ASSERT_TRUE(grow);
  EXPECT_EQ(grow->required_bytes, 100u);
  EXPECT_TRUE(grow->parameters.empty());
  EXPECT_EQ(grow->owner, record_owner::csi);
  auto modify = change_request(s, {100, {{"a", "0"}}});
  ASSERT_TRUE(modify);
  EXPECT_EQ(modify->required_bytes, 0u);
  EXPECT_EQ(modify->parameters, (option_map{{"a", "1"}, {"b", "2"}}));
}

TEST(volume_intent, statuses_report_the_record_and_the_failure) {
  volume_record rec;
  rec.capacity_bytes = 64;
  rec.mutable_parameters = {{"a", "1"}};
  rec.modifications = 3;
  auto ready = ready_status(rec, 5);
  EXPECT_EQ(ready.phase, phase_ready);
  EXPECT_EQ(ready.capacity_bytes, 64u);
  EXPECT_EQ(ready.modifications, 3u);
  EXPECT_EQ(ready.observed_generation, 5);
  EXPECT_TRUE(ready.reason.empty());
  auto failed = failed_status(phase_ready, make_error(ec::out_of_range, "too big"), 6, &rec);
  EXPECT_EQ(failed.phase, phase_ready);
  EXPECT_EQ(failed.capacity_bytes, 64u);
  EXPECT_EQ(failed.reason, "out_of_range");
  EXPECT_EQ(failed.message, "too big");
  EXPECT_EQ(failed_status(phase_failed, make_error(ec::invalid_argument, "x"), 1, nullptr).capacity_bytes, 0u);
  EXPECT_EQ(ec_from_string("out_of_range"), ec::out_of_range);
  EXPECT_FALSE(ec_from_string("nonsense"));
}

} // namespace
} // namespace berth::kube::agent
