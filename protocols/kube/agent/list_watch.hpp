#pragma once

// The node agent's view of one kind of its objects: LIST every page, then WATCH from the
// list's resourceVersion; LIST again after 410 Gone or a resourceVersion the server no
// longer takes; back off while the API is away. BerthVolumes and BerthSnapshots are each
// watched by one such loop.

#include <chrono>
#include <functional>
#include <string>
#include <vector>

#include "protocols/kube/object_api.hpp"

namespace berth::kube::agent {

struct watch_handlers {
  /// An object listed, ADDED or MODIFIED: returns its name, or "" when it was not taken in.
  std::function<std::string(const std::string& json)> seen;
  /// An object DELETED.
  std::function<void(const std::string& json)> deleted;
  /// After each whole LIST: the names `seen` returned. What it lacks went while no watch ran.
  std::function<void(const std::vector<std::string>& names)> listed;
  /// Whether the loop ends.
  std::function<bool()> stopping;
  /// A pause that ends early when the loop ends.
  std::function<void(std::chrono::milliseconds)> sleep;
};

/// Runs until `h.stopping()`. `what` names the objects in logs, e.g. "the BerthVolumes of
/// node n1".
void list_and_watch(object_api& api, const resource_ref& kind, const list_query& selector,
                    const std::string& what, const watch_handlers& h);

} // namespace berth::kube::agent
