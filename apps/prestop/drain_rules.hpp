#pragma once

// Whether a Node is being drained, and which VolumeAttachments hold `berthd prestop`:
// plain functions on the kube_api structs (docs/design.md, "A node drain waits for its
// volumes").

#include <string>

#include "protocols/kube/kube_api.hpp"

namespace berth::drain {

/// The decision and what it rests on, for the log.
struct drain_verdict {
  bool draining = false;
  /// Why: "taint karpenter.sh/disrupted", "node not found (404)", or, when not
  /// draining, the fields read ("spec.unschedulable is false; taints: none ...").
  std::string reason;
};

/// Draining when the node is gone (404), spec.unschedulable is set, or it carries a
/// taint node.kubernetes.io/unschedulable, ToBeDeletedByClusterAutoscaler,
/// karpenter.sh/disrupted, or karpenter.sh/disruption=disrupting.
drain_verdict judge_node(const kube::node_info& node);

/// True for an attachment of `driver` to `node`: the ones the hook waits for.
bool holds_node(const kube::attachment& a, const std::string& node, const std::string& driver);

} // namespace berth::drain
