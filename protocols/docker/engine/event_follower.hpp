#pragma once

// Follows dockerd's container events for as long as berth runs: the stream is opened again
// whenever it ends or fails, with exponential backoff (limits::docker_events_backoff_*), so a
// dockerd that is absent, restarting or hung never makes berth spin or stop; a stream the
// client ended for its silence (events_end::idle) is opened again at once. It logs once when
// dockerd goes away (or is not there at the start) and once when it is back, not per retry.

#include <chrono>
#include <functional>

#include "core/limits.hpp"
#include "protocols/docker/engine/engine_api.hpp"

namespace berth::docker_engine {

/// The backoff between attempts; tests shorten it.
struct follow_options {
  std::chrono::milliseconds backoff_first = limits::docker_events_backoff_first;
  std::chrono::milliseconds backoff_cap = limits::docker_events_backoff_cap;
};

/// What the follower reports.
struct follow_handler {
  /// The stream is open, from `instance`; `changed` when that is not the instance of the
  /// last open (true at the first open): a new dockerd, whose counts start afresh.
  std::function<void(const engine_instance& instance, bool changed)> on_open;
  /// One container event.
  std::function<void(const container_event&)> on_event;
};

/// Follows the events of `api` until `stop` is raised (blocks; run it on its own thread).
/// After a reconnection it asks for the events since the last one it delivered, so a
/// stream that dropped while dockerd stayed up loses nothing dockerd still holds.
void follow_events(engine_api& api, const follow_handler& handler, stop_signal& stop,
                   follow_options opts = {});

} // namespace berth::docker_engine
