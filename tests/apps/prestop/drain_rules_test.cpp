// The drain decision (drain/drain_rules): which Node fields mean "being drained".
#include "apps/prestop/drain_rules.hpp"

#include <gtest/gtest.h>

namespace berth::drain {
namespace {

kube::node_info node_with(std::vector<kube::taint> taints, bool unschedulable = false) {
  kube::node_info n;
  n.found = true;
  n.unschedulable = unschedulable;
  n.taints = std::move(taints);
  return n;
}

TEST(drain_rules, a_schedulable_node_without_drain_taints_is_not_draining_and_says_what_it_read) {
  auto v = judge_node(node_with({{"dedicated", "db", "NoSchedule"},
                                 {"karpenter.sh/disruption", "candidate", "NoSchedule"}}));
  EXPECT_FALSE(v.draining);
  EXPECT_NE(v.reason.find("spec.unschedulable is false"), std::string::npos) << v.reason;
  EXPECT_NE(v.reason.find("dedicated=db:NoSchedule"), std::string::npos) << v.reason;
  EXPECT_NE(v.reason.find("karpenter.sh/disruption=candidate"), std::string::npos) << v.reason;
  EXPECT_NE(judge_node(node_with({})).reason.find("taints: none"), std::string::npos);
}

TEST(drain_rules, a_missing_node_or_a_cordon_is_draining) {
  kube::node_info gone;
  auto v = judge_node(gone);
  EXPECT_TRUE(v.draining);
  EXPECT_NE(v.reason.find("404"), std::string::npos) << v.reason;
  v = judge_node(node_with({}, true));
  EXPECT_TRUE(v.draining);
  EXPECT_NE(v.reason.find("spec.unschedulable"), std::string::npos) << v.reason;
}

TEST(drain_rules, each_drain_taint_is_draining_and_named) {
  for (const char* key : {"node.kubernetes.io/unschedulable", "ToBeDeletedByClusterAutoscaler",
                          "karpenter.sh/disrupted"}) {
    auto v = judge_node(node_with({{"other", "", "NoExecute"}, {key, "1699999999", "NoSchedule"}}));
    EXPECT_TRUE(v.draining) << key;
    EXPECT_EQ(v.reason, std::string{"taint "} + key);
  }
  auto v = judge_node(node_with({{"karpenter.sh/disruption", "disrupting", "NoSchedule"}}));
  EXPECT_TRUE(v.draining);
  EXPECT_EQ(v.reason, "taint karpenter.sh/disruption=disrupting");
}

TEST(drain_rules, only_this_drivers_attachments_for_this_node_hold_it) {
  EXPECT_TRUE(holds_node({"a", "n1", "berth.csi.dev", "pv"}, "n1", "berth.csi.dev"));
  EXPECT_FALSE(holds_node({"a", "n2", "berth.csi.dev", "pv"}, "n1", "berth.csi.dev"));
  EXPECT_FALSE(holds_node({"a", "n1", "ebs.csi.aws.com", "pv"}, "n1", "berth.csi.dev"));
}

} // namespace
} // namespace berth::drain
