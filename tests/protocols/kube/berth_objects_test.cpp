#include <gtest/gtest.h>

#include "core/errors.hpp"
#include "protocols/kube/berth_objects.hpp"
#include "protocols/kube/detail/object_json.hpp"

namespace berth::kube {
namespace {

volume_object_spec sample_spec() {
  volume_object_spec s;
  s.csi_name = "pvc-1234";
  s.node = "worker-1";
  s.size_bytes = 1 << 30;
  s.limit_bytes = 2u << 30;
  s.parameters = {{"backend", "block"}, {"fsType", "xfs"}};
  s.mutable_parameters = {{"readAheadKB", "128"}};
  s.source_volume = "pvc-src";
  s.access_type = "mount";
  s.fs_type = "xfs";
  s.mount_flags = {"noatime"};
  s.access_mode = "SINGLE_NODE_WRITER";
  return s;
}

TEST(berth_objects, a_volume_object_reads_back_as_written_with_label_and_finalizer) {
  auto json = volume_object_json("pvc-1234", sample_spec());
  auto obj = parse_volume_object(json);
  ASSERT_TRUE(obj) << describe(obj.error());
  EXPECT_EQ(obj->name, "pvc-1234");
  auto s = obj->spec;
  auto want = sample_spec();
  EXPECT_EQ(s.csi_name, want.csi_name);
  EXPECT_EQ(s.node, want.node);
  EXPECT_EQ(s.size_bytes, want.size_bytes);
  EXPECT_EQ(s.limit_bytes, want.limit_bytes);
  EXPECT_EQ(s.parameters, want.parameters);
  EXPECT_EQ(s.mutable_parameters, want.mutable_parameters);
  EXPECT_EQ(s.source_volume, want.source_volume);
  EXPECT_EQ(s.mount_flags, want.mount_flags);
  EXPECT_EQ(s.access_mode, want.access_mode);
  EXPECT_EQ(obj->finalizers, std::vector<std::string>{storage_finalizer});
  EXPECT_NE(json.find(R"("berth.csi.dev/node":"worker-1")"), std::string::npos) << json;
}

TEST(berth_objects, status_and_metadata_are_read) {
  auto obj = parse_volume_object(R"({"metadata":{"name":"v","resourceVersion":"7","generation":3,
    "deletionTimestamp":"2026-12-02T00:00:00Z"},"spec":{"name":"v"},
    "status":{"phase":"Ready","capacityBytes":42,"appliedParameters":{"a":"b"},"modifications":2,
    "observedGeneration":3,"reason":"out_of_range","message":"too big"}})");
  ASSERT_TRUE(obj) << describe(obj.error());
  EXPECT_EQ(obj->resource_version, "7");
  EXPECT_EQ(obj->generation, 3);
  EXPECT_TRUE(obj->deleting);
  EXPECT_EQ(obj->status.capacity_bytes, 42u);
  EXPECT_EQ(obj->status.modifications, 2u);
  EXPECT_EQ(obj->status.observed_generation, 3);
  EXPECT_EQ(obj->status.reason, "out_of_range");
  EXPECT_EQ(obj->status.applied_parameters.at("a"), "b");
}

TEST(berth_objects, a_field_of_the_wrong_type_is_a_malformed_answer) {
  for (const char* bad : {R"({"spec":{"sizeBytes":-1}})", R"({"spec":{"sizeBytes":"1"}})",
                          R"({"spec":{"parameters":{"a":1}}})", R"({"metadata":{"finalizers":"x"}})",
                          "[1]", "{"}) {
    auto obj = parse_volume_object(bad);
    ASSERT_FALSE(obj) << bad;
    EXPECT_TRUE(is(obj.error(), ec::unavailable)) << bad;
  }
}

TEST(berth_objects, the_status_patch_carries_every_field) {
  volume_object_status st;
  st.phase = phase_failed;
  st.capacity_bytes = 9;
  st.applied_parameters = {{"k", "v"}};
  st.observed_generation = 4;
  st.modifications = 3;
  st.reason = "invalid_argument";
  st.message = "no \"x\"";
  st.delete_request = "0123abcd";
  auto back = parse_volume_object(status_patch(st, {}));
  ASSERT_TRUE(back);
  EXPECT_EQ(back->status.phase, phase_failed);
  EXPECT_EQ(back->status.capacity_bytes, 9u);
  EXPECT_EQ(back->status.applied_parameters, (std::map<std::string, std::string>{{"k", "v"}}));
  EXPECT_EQ(back->status.modifications, 3u);
  EXPECT_EQ(back->status.observed_generation, 4);
  EXPECT_EQ(back->status.reason, "invalid_argument");
  EXPECT_EQ(back->status.message, "no \"x\"");
  EXPECT_EQ(back->status.delete_request, "0123abcd");
}

TEST(berth_objects, the_ready_condition_follows_the_phase_and_keeps_its_time_while_it_holds) {
  volume_object_status failed;
  failed.phase = phase_failed;
  failed.reason = "resource_exhausted";
  failed.message = "no room";
  failed.observed_generation = 1;
  auto json = status_patch(failed, {});
  EXPECT_NE(json.find(R"("type":"Ready","status":"False","reason":"ResourceExhausted","message":"no room")"),
            std::string::npos) << json;
  auto first = parse_volume_object(json);
  ASSERT_TRUE(first);
  ASSERT_FALSE(first->status.ready_since.empty()); // a new condition starts now
  // Failed again: the condition did not change, so neither does its time.
  json = status_patch(failed, first->status);
  auto again = parse_volume_object(json);
  ASSERT_TRUE(again);
  EXPECT_EQ(again->status.ready_since, first->status.ready_since);
  // Ready: a transition, written with the time of now (not the old one).
  volume_object_status ready;
  ready.phase = phase_ready;
  ready.observed_generation = 2;
  auto before = first->status;
  before.ready_since = "2000-01-01T00:00:00Z";
  json = status_patch(ready, before);
  EXPECT_NE(json.find(R"("type":"Ready","status":"True","reason":"Ready")"), std::string::npos) << json;
  EXPECT_EQ(json.find("2000-01-01"), std::string::npos) << json;
  EXPECT_NE(json.find(R"("observedGeneration":2})"), std::string::npos) << json;
}

TEST(berth_objects, a_change_that_failed_is_a_false_condition_of_its_own) {
  volume_object_status ready;
  ready.phase = phase_ready;
  ready.observed_generation = 1;
  auto first = parse_volume_object(status_patch(ready, {}));
  ASSERT_TRUE(first);
  ASSERT_FALSE(first->status.applied_since.empty());
  first->status.applied_since = "2000-01-01T00:00:00Z";
  first->status.ready_since = "2000-01-01T00:00:00Z";
  // Generation 2 asks for more than the backend allows: the volume is still usable.
  volume_object_status refused = ready;
  refused.observed_generation = 2;
  refused.reason = "out_of_range";
  refused.message = "no size between 9 and 8";
  auto json = status_patch(refused, first->status);
  EXPECT_NE(json.find(R"({"type":"Ready","status":"True","reason":"Ready","message":"",)"
                      R"("lastTransitionTime":"2000-01-01T00:00:00Z","observedGeneration":2})"),
            std::string::npos) << json;
  EXPECT_NE(json.find(R"({"type":"Applied","status":"False","reason":"OutOfRange",)"
                      R"("message":"no size between 9 and 8","lastTransitionTime":")"),
            std::string::npos) << json;
  EXPECT_EQ(json.find(R"("Applied","status":"False","reason":"OutOfRange","message":"no size between 9 and 8","lastTransitionTime":"2000)"),
            std::string::npos) << "Applied changed: its time is now\n" << json;
  // Generation 3 is carried out: Applied again, from now.
  auto failed = parse_volume_object(json);
  ASSERT_TRUE(failed);
  volume_object_status done = ready;
  done.observed_generation = 3;
  json = status_patch(done, failed->status);
  EXPECT_NE(json.find(R"({"type":"Applied","status":"True","reason":"Applied","message":"",)"),
            std::string::npos) << json;
}

TEST(berth_objects, a_condition_reason_is_the_error_code_in_camel_case) {
  EXPECT_EQ(detail::condition_reason("out_of_range"), "OutOfRange");
  EXPECT_EQ(detail::condition_reason("invalid_argument"), "InvalidArgument");
  EXPECT_EQ(detail::condition_reason("unavailable"), "Unavailable");
}

TEST(berth_objects, a_delete_request_is_an_annotation_the_object_carries) {
  EXPECT_EQ(delete_request_patch("t-1"),
            R"({"metadata":{"annotations":{"berth.csi.dev/delete-request":"t-1"}}})");
  auto obj = parse_volume_object(
    R"({"metadata":{"name":"v","annotations":{"berth.csi.dev/delete-request":"t-1"}}})");
  ASSERT_TRUE(obj);
  EXPECT_EQ(obj->delete_request, "t-1");
}

TEST(berth_objects, a_spec_patch_removes_the_parameters_it_no_longer_names) {
  EXPECT_EQ(spec_patch("5", 10, {{"a", "1"}}, {{"a", "0"}, {"b", "2"}}),
            R"({"metadata":{"resourceVersion":"5"},"spec":{"sizeBytes":10,)"
            R"("mutableParameters":{"a":"1","b":null}}})");
}

TEST(berth_objects, object_names_are_valid_and_distinct) {
  EXPECT_EQ(object_name_for("pvc-0b1c2d3e-aaaa-bbbb-cccc-0123456789ab"),
            "pvc-0b1c2d3e-aaaa-bbbb-cccc-0123456789ab");
  auto upper = object_name_for("sanity-Node-ABC");
  EXPECT_EQ(upper.rfind("bv-sanity-node-abc-", 0), 0u) << upper;
  EXPECT_NE(object_name_for("sanity-Node-ABC"), object_name_for("sanity-node-abc"));
  EXPECT_NE(object_name_for("a_b"), object_name_for("a-b"));
  auto longest = object_name_for(std::string(128, 'X'));
  EXPECT_LE(longest.size(), 63u);
  auto dashed = object_name_for("-x");
  EXPECT_EQ(dashed.rfind("bv-x-", 0), 0u) << dashed;
  EXPECT_EQ(dashed.size(), 5u + 16u) << dashed;
  EXPECT_EQ(object_name_for("___").size(), 3u + 16u); // nothing of it is kept: the hash alone
}

TEST(berth_objects, node_label_values_fit_a_label) {
  EXPECT_EQ(node_label_value("worker-1.example.com"), "worker-1.example.com");
  auto hashed = node_label_value(std::string(70, 'a'));
  EXPECT_EQ(hashed.size(), 42u);
  EXPECT_EQ(hashed.rfind("h-", 0), 0u);
}

TEST(berth_objects, node_capacity_reads_only_numbers_under_berths_prefix) {
  auto cap = parse_node_capacity(R"({"metadata":{"annotations":{
    "capacity.berth.csi.dev/block":"1000","capacity.berth.csi.dev/local":"x",
    "other.io/block":"5"}}})");
  ASSERT_TRUE(cap);
  EXPECT_EQ(cap->size(), 1u);
  EXPECT_EQ(cap->at("block"), 1000u);
  auto patch = capacity_patch({{"block", 7}});
  EXPECT_EQ(patch, R"({"metadata":{"annotations":{"capacity.berth.csi.dev/block":"7"}}})");
  EXPECT_EQ(parse_node_capacity(patch)->at("block"), 7u);
}

} // namespace
} // namespace berth::kube
