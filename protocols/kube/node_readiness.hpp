#pragma once

// A Node's Ready condition (status.conditions, type Ready): kubelet keeps it True, and the
// node lifecycle controller sets it Unknown once kubelet has not reported for
// node-monitor-grace-period (40 s by default). The controller says a volume on a Node that
// is not Ready is abnormal (docs/design.md, "Volume health").

#include <string>

#include <caf/expected.hpp>

namespace berth::kube {

struct node_readiness {
  /// "True", "False" or "Unknown"; "" when the Node has no Ready condition (no kubelet ever
  /// reported it): nothing is judged then.
  std::string status;
  std::string since;   ///< lastTransitionTime, RFC 3339
  std::string reason;  ///< e.g. NodeStatusUnknown, KubeletNotReady
  std::string message; ///< e.g. "Kubelet stopped posting node status."
};

/// The Ready condition of a Node's JSON. Fails (ec::unavailable) on bad JSON.
caf::expected<node_readiness> parse_node_readiness(const std::string& node_json);

} // namespace berth::kube
