#include "apps/prestop/drain_rules.hpp"

namespace berth::drain {

namespace {

/// Taints whose presence alone marks a drain (any value).
constexpr const char* drain_taints[] = {
  "node.kubernetes.io/unschedulable",
  "ToBeDeletedByClusterAutoscaler",
  "karpenter.sh/disrupted",
};

/// Karpenter's older taint marks a drain only with this value.
constexpr const char* karpenter_disruption = "karpenter.sh/disruption";
constexpr const char* disrupting = "disrupting";

std::string spell(const kube::taint& t) {
  std::string out = t.key;
  if (!t.value.empty()) {
    out += "=" + t.value;
  }
  if (!t.effect.empty()) {
    out += ":" + t.effect;
  }
  return out;
}

} // namespace

drain_verdict judge_node(const kube::node_info& node) {
  if (!node.found) {
    return {true, "node not found (404): it is being deleted"};
  }
  if (node.unschedulable) {
    return {true, "spec.unschedulable is true (cordoned)"};
  }
  for (const auto& t : node.taints) {
    for (const char* key : drain_taints) {
      if (t.key == key) {
        return {true, "taint " + t.key};
      }
    }
    if (t.key == karpenter_disruption && t.value == disrupting) {
      return {true, "taint " + t.key + "=" + t.value};
    }
  }
  std::string taints;
  for (const auto& t : node.taints) {
    taints += (taints.empty() ? "" : ", ") + spell(t);
  }
  return {false, "spec.unschedulable is false; taints: " + (taints.empty() ? "none" : taints)
                   + " (none of node.kubernetes.io/unschedulable, ToBeDeletedByClusterAutoscaler,"
                     " karpenter.sh/disrupted, karpenter.sh/disruption=disrupting)"};
}

bool holds_node(const kube::attachment& a, const std::string& node, const std::string& driver) {
  return a.node == node && a.attacher == driver;
}

} // namespace berth::drain
