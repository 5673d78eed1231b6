#include "protocols/docker/engine/event_follower.hpp"

#include <spdlog/spdlog.h>

#include "core/errors.hpp"
#include "core/retry.hpp"

namespace berth::docker_engine {

using clock_type = std::chrono::steady_clock;

void follow_events(engine_api& api, const follow_handler& handler, stop_signal& stop,
                   follow_options opts) {
  drain::backoff delay{opts.backoff_first, opts.backoff_cap};
  enum class seen { never, up, down } state = seen::never;
  bool failed_once = false; // a failure was logged since the stream was last open
  engine_instance last;
  bool opened_before = false;
  int64_t last_event_nano = 0;
  auto down_since = clock_type::now();

  event_handler inner;
  inner.on_open = [&](const engine_instance& who) {
    bool changed = !opened_before || who != last;
    if (state == seen::down || (state == seen::never && failed_once)) {
      auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(clock_type::now() - down_since);
      spdlog::info("Docker API {}: dockerd answers again after {:.1f} s ({}{}); following container "
                   "events",
                   api.describe(), static_cast<double>(ms.count()) / 1000.0, who.describe(),
                   changed && opened_before ? ", a new instance" : "");
    } else if (state == seen::never) {
      spdlog::info("Docker API {}: following container events ({})", api.describe(), who.describe());
    } else if (changed) {
      spdlog::info("Docker API {}: a new dockerd instance answers ({}, was {})", api.describe(),
                   who.describe(), last.describe());
    }
    state = seen::up;
    failed_once = false;
    opened_before = true;
    last = who;
    delay.reset();
    if (handler.on_open) {
      handler.on_open(who, changed);
    }
  };
  inner.on_event = [&](const container_event& ev) {
    if (ev.time_nano > last_event_nano) {
      last_event_nano = ev.time_nano;
    }
    if (handler.on_event) {
      handler.on_event(ev);
    }
  };

  while (!stop.stop_requested()) {
    auto end = api.events(inner, stop, last_event_nano > 0 ? last_event_nano + 1 : 0);
    if (end && *end == events_end::stopped) {
      return;
    }
    if (end && *end == events_end::idle) {
      // Not a failure: opened again at once, and a dockerd that no longer answers shows up
      // as the open's failure.
      spdlog::debug("Docker API {}: the events stream was silent for its idle bound; opening it "
                    "again to check that dockerd still answers",
                    api.describe());
      continue;
    }
    if (!end) {
      if (state == seen::up) {
        spdlog::warn("dockerd went away: {}; retrying with backoff (at most {} ms apart), berth "
                     "keeps serving",
                     describe(end.error()), opts.backoff_cap.count());
        state = seen::down;
        down_since = clock_type::now();
      } else if (!failed_once && state == seen::never) {
        spdlog::warn("dockerd does not answer: {}; retrying with backoff (at most {} ms apart), "
                     "berth keeps serving",
                     describe(end.error()), opts.backoff_cap.count());
        down_since = clock_type::now();
      } else {
        spdlog::debug("dockerd still does not answer: {}", describe(end.error()));
      }
      failed_once = true;
    } else {
      spdlog::debug("Docker API {}: dockerd ended the events stream; opening it again",
                    api.describe());
    }
    if (stop.wait_for(delay.next())) {
      return;
    }
  }
}

} // namespace berth::docker_engine
