#pragma once

// How long the node agent's calls to the API server may take, shared by its files.

#include <chrono>

namespace berth::kube::agent::detail {

using clock_type = std::chrono::steady_clock;

/// One call to the API server; a watch runs for limits::kube_watch_window of its own.
constexpr std::chrono::seconds call_bound{30};
constexpr std::chrono::minutes watch_bound{5};

} // namespace berth::kube::agent::detail
