#include <gtest/gtest.h>

#include "core/errors.hpp"
#include "protocols/kube/berth_objects.hpp"
#include "protocols/kube/snapshot_objects.hpp"

namespace berth::kube {
namespace {

TEST(snapshot_objects, a_snapshot_object_reads_back_as_written_with_label_and_finalizer) {
  snapshot_object_spec spec;
  spec.csi_name = "snapshot-1234";
  spec.source_volume = "pvc-src";
  spec.node = "worker-1";
  spec.parameters = {{"backend", "block"}};
  auto json = snapshot_object_json("snapshot-1234", spec);
  auto obj = parse_snapshot_object(json);
  ASSERT_TRUE(obj) << describe(obj.error());
  EXPECT_EQ(obj->name, "snapshot-1234");
  EXPECT_EQ(obj->spec.csi_name, spec.csi_name);
  EXPECT_EQ(obj->spec.source_volume, spec.source_volume);
  EXPECT_EQ(obj->spec.node, spec.node);
  EXPECT_EQ(obj->spec.parameters, spec.parameters);
  EXPECT_EQ(obj->finalizers, std::vector<std::string>{storage_finalizer});
  EXPECT_NE(json.find(R"("kind":"BerthSnapshot")"), std::string::npos) << json;
  EXPECT_NE(json.find(R"("berth.csi.dev/node":"worker-1")"), std::string::npos) << json;
}

TEST(snapshot_objects, the_status_patch_reads_back_with_every_field) {
  snapshot_object_status st;
  st.phase = phase_deleting;
  st.size_bytes = 1 << 20;
  st.ready_to_use = true;
  st.creation_time = "2026-12-04T18:00:00Z";
  st.observed_generation = 2;
  st.reason = "failed_precondition";
  st.message = "in use";
  st.delete_request = "abc";
  auto obj = parse_snapshot_object(R"({"metadata":{"name":"s","generation":2,
    "deletionTimestamp":"2026-12-04T18:01:00Z",
    "annotations":{"berth.csi.dev/delete-request":"abc"}},)"
                                   + snapshot_status_patch(st, {}).substr(1));
  ASSERT_TRUE(obj) << describe(obj.error());
  EXPECT_TRUE(obj->deleting);
  EXPECT_EQ(obj->delete_request, "abc");
  EXPECT_EQ(obj->status.phase, st.phase);
  EXPECT_EQ(obj->status.size_bytes, st.size_bytes);
  EXPECT_TRUE(obj->status.ready_to_use);
  EXPECT_EQ(obj->status.creation_time, st.creation_time);
  EXPECT_EQ(obj->status.observed_generation, 2);
  EXPECT_EQ(obj->status.reason, st.reason);
  EXPECT_EQ(obj->status.message, st.message);
  EXPECT_EQ(obj->status.delete_request, st.delete_request);
  EXPECT_FALSE(obj->status.ready_since.empty());
  auto patch = snapshot_status_patch(st, {});
  EXPECT_NE(patch.find(R"("type":"Ready","status":"True")"), std::string::npos) << patch;
}

TEST(snapshot_objects, a_field_of_the_wrong_type_is_a_malformed_answer) {
  for (const char* bad : {R"({"status":{"sizeBytes":-1}})", R"({"spec":{"parameters":{"a":1}}})",
                          R"({"metadata":{"finalizers":"x"}})", "[1]", "{"}) {
    auto obj = parse_snapshot_object(bad);
    ASSERT_FALSE(obj) << bad;
    EXPECT_TRUE(is(obj.error(), ec::unavailable)) << bad;
  }
}

} // namespace
} // namespace berth::kube
