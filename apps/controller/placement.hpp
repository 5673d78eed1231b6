#pragma once

// Which node a new volume goes to, in the cluster mode: pure, from the request's topology
// and the capacity each node reports (its Node's capacity.berth.csi.dev/BACKEND
// annotations). docs/running.md, "berth on a cluster", says the rules.

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include <caf/expected.hpp>

namespace berth::controller {

/// Bytes free, by node and then by backend, as the nodes last reported them.
using capacity_map = std::map<std::string, std::map<std::string, uint64_t>>;

struct placement_request {
  /// accessibility_requirements, node names in the request's order: preferred first.
  std::vector<std::string> preferred;
  std::vector<std::string> requisite;
  /// The node of the content source ("" for none): the volume must go there.
  std::string pinned;
  std::string backend;
  uint64_t bytes = 0;
};

/// The first candidate with room: preferred then requisite, in order; without
/// requirements, every node that reported, most room first. A pinned volume's only
/// candidate is its source's node, which the requirements (when given) must include.
/// Errors are ec::resource_exhausted (the CSI code for "cannot provision there") naming
/// each node tried and why it could not take the volume.
caf::expected<std::string> choose_node(const placement_request& req, const capacity_map& capacity);

} // namespace berth::controller
