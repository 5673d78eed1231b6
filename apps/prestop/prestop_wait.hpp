#pragma once

// The wait of `berthd prestop` (docs/design.md, "A node drain waits for its volumes"):
//
//   get_node ─▶ judge_node ─ not draining ─▶ return at once
//                  │ draining
//                  ▼
//   watcher thread: LIST+WATCH VolumeAttachments ─┐
//   poller thread:  GET /v1/volumes (admin) ──────┼─▶ wait_state ─▶ this thread returns when
//                                                 ┘   both are clear, or at the deadline
//
// Every outcome is logged for the operator; none is an error (kubelet ignores a hook's
// exit code).

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "apps/prestop/local_volumes.hpp"
#include "protocols/kube/kube_api.hpp"

namespace berth::drain {

/// What the wait needs.
struct prestop_config {
  std::string node;
  std::string driver = "berth.csi.dev";
  std::string admin_socket;
  std::chrono::milliseconds deadline{std::chrono::seconds{120}};
  std::chrono::milliseconds local_period{500}; ///< how often berthd is asked
  size_t page_limit = 500;                     ///< VolumeAttachments per LIST page
  std::chrono::milliseconds min_watch{1000};   ///< see watch_target::min_watch
};

/// How the wait ended.
enum class prestop_result {
  not_draining, ///< returned at once
  drained,      ///< nothing holds the node any more
  deadline,     ///< gave up at the deadline (see the outcome's lists)
  node_unknown, ///< the Node could not be read before the deadline
};

struct prestop_outcome {
  prestop_result result = prestop_result::node_unknown;
  std::string reason; ///< judge_node's reason (empty for node_unknown)
  /// At the deadline: the attachments still present, and whether they were ever listed.
  std::vector<kube::attachment> attachments;
  bool listed = false;
  /// At the deadline: berthd's volumes still staged or published, and whether it answered.
  std::vector<busy_volume> busy;
  bool local_known = false;
};

/// Decides whether the node is being drained and, if so, waits. Returns by
/// cfg.deadline at the latest. A worker still blocked in a call when it returns
/// leaves by itself by the deadline (it shares `api`).
prestop_outcome wait_for_drain(const prestop_config& cfg, std::shared_ptr<kube::kube_api> api);

} // namespace berth::drain
