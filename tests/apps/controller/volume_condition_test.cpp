// What the cluster controller says of a volume's health (apps/controller/volume_condition):
// from its Node's Ready condition as the API server holds it (parse_node_readiness, on the
// JSON a real API server answers) and from the failure its node reported.

#include <gtest/gtest.h>

#include "apps/controller/volume_condition.hpp"

namespace berth::controller {
namespace {

kube::volume_object on_n1() {
  kube::volume_object obj;
  obj.spec.csi_name = "pvc-1";
  obj.spec.node = "n1";
  obj.status.phase = "Ready";
  return obj;
}

csi::v1::VolumeCondition condition_of(const kube::volume_object& obj,
                                      const std::optional<kube::node_readiness>& node) {
  csi::v1::VolumeCondition out;
  encode_object_condition(obj, node, &out);
  return out;
}

TEST(volume_condition, reads_a_nodes_ready_condition) {
  // The shape of a Node whose kubelet stopped reporting (node lifecycle controller).
  auto ready = kube::parse_node_readiness(
    R"({"kind":"Node","metadata":{"name":"n1"},"status":{"conditions":[)"
    R"({"type":"MemoryPressure","status":"Unknown"},)"
    R"({"type":"Ready","status":"Unknown","lastTransitionTime":"2026-12-08T01:00:00Z",)"
    R"("reason":"NodeStatusUnknown","message":"Kubelet stopped posting node status."}]}})");
  ASSERT_TRUE(ready);
  EXPECT_EQ(ready->status, "Unknown");
  EXPECT_EQ(ready->since, "2026-12-08T01:00:00Z");
  EXPECT_EQ(ready->message, "Kubelet stopped posting node status.");
  auto none = kube::parse_node_readiness(R"({"kind":"Node","metadata":{"name":"n1"}})");
  ASSERT_TRUE(none);
  EXPECT_EQ(none->status, "") << "no kubelet ever reported: nothing to judge";
  EXPECT_FALSE(kube::parse_node_readiness("not json"));
}

TEST(volume_condition, healthy_on_a_ready_node_or_one_no_kubelet_reported) {
  kube::node_readiness ready;
  ready.status = "True";
  EXPECT_FALSE(condition_of(on_n1(), ready).abnormal());
  EXPECT_EQ(condition_of(on_n1(), ready).message(), "volume is healthy");
  EXPECT_FALSE(condition_of(on_n1(), kube::node_readiness{}).abnormal());
}

TEST(volume_condition, abnormal_when_its_node_is_gone_or_not_ready) {
  auto gone = condition_of(on_n1(), std::nullopt);
  EXPECT_TRUE(gone.abnormal());
  EXPECT_NE(gone.message().find("node \"n1\" no longer exists"), std::string::npos)
    << gone.message();
  kube::node_readiness late;
  late.status = "Unknown";
  late.since = "2026-12-08T01:00:00Z";
  late.message = "Kubelet stopped posting node status.";
  auto c = condition_of(on_n1(), late);
  EXPECT_TRUE(c.abnormal());
  EXPECT_EQ(c.message(),
            "node \"n1\" is not Ready (Unknown since 2026-12-08T01:00:00Z: Kubelet stopped "
            "posting node status.): the data of volume \"pvc-1\" is on it and cannot be "
            "reached until the node is back");
}

TEST(volume_condition, abnormal_with_the_failure_its_node_reported) {
  auto failed = on_n1();
  failed.status.phase = kube::phase_failed;
  failed.status.message = "mkfs.xfs failed: no space left on device";
  kube::node_readiness ready;
  ready.status = "True";
  auto c = condition_of(failed, ready);
  EXPECT_TRUE(c.abnormal());
  EXPECT_EQ(c.message(), "mkfs.xfs failed: no space left on device");
  auto both = condition_of(failed, std::nullopt);
  EXPECT_NE(both.message().find("delete the volume; mkfs.xfs failed"), std::string::npos)
    << both.message();
}

} // namespace
} // namespace berth::controller
