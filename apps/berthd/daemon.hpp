#pragma once

#include "apps/berthd/daemon_options.hpp"

namespace berth {

/// Runs berthd until SIGTERM/SIGINT, then stops gracefully: stop accepting,
/// finish in-flight requests (bounded by stop_timeout), flush the state.
/// SIGTERM/SIGINT must be blocked in every thread before this is called.
/// Returns the process exit code.
int run_daemon(const daemon_options& opts);

} // namespace berth
