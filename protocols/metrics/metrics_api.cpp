#include "protocols/metrics/metrics_api.hpp"

#include <caf/sec.hpp>
#include <spdlog/spdlog.h>

#include "core/errors.hpp"
#include "protocols/metrics/collect.hpp"
#include "protocols/metrics/exposition.hpp"

namespace berth {

namespace {

constexpr const char* text_type = "text/plain; charset=utf-8";

/// The outcome of one /healthz: both actors' answers, then one reply.
struct health_check {
  explicit health_check(reply_fn fn) : reply(std::move(fn)) {
  }

  /// Records one actor's answer (on the gateway's thread, one at a time).
  void answered(const char* who, const caf::error& err, std::chrono::milliseconds timeout) {
    if (err) {
      if (!failures.empty()) {
        failures += "; ";
      }
      if (err == caf::sec::request_timeout) {
        failures += std::string{"the "} + who + " actor did not answer within "
                    + std::to_string(timeout.count()) + " ms";
      } else {
        failures += std::string{"the "} + who + " actor failed: " + describe(err);
      }
    }
    if (++answers < 2) {
      return;
    }
    if (failures.empty()) {
      reply(200, text_type, "ok\n");
    } else {
      spdlog::warn("metrics: /healthz unhealthy: {}", failures);
      reply(503, text_type, "unhealthy: " + failures + "\n");
    }
  }

  reply_fn reply;
  int answers = 0;
  std::string failures;
};

} // namespace

metrics_api::metrics_api(caf::actor_system& sys, std::shared_ptr<const telemetry> stats,
                         std::chrono::milliseconds timeout)
  : stats_(std::move(stats)), timeout_(timeout), gw_(sys) {
}

void metrics_api::attach(registry_actor registry, persistence_actor persistence) {
  std::lock_guard<std::mutex> guard{mtx_};
  actors_ = actors{std::move(registry), std::move(persistence)};
}

void metrics_api::handle(const std::string& method, const std::string& target, reply_fn reply) {
  auto path = target.substr(0, target.find('?'));
  if (path != "/metrics" && path != "/healthz" && path != "/readyz") {
    reply(404, text_type,
          "no such path: " + path + " (this endpoint serves /metrics, /healthz and /readyz)\n");
    return;
  }
  if (method != "GET") {
    reply(405, text_type, "method " + method + " not allowed on " + path + ": use GET\n");
    return;
  }
  if (path == "/metrics") {
    auto page = metrics::scrape(*stats_);
    if (!page) {
      spdlog::error("metrics: cannot render the page: {}", describe(page.error()));
      reply(500, text_type, "cannot render the metrics: " + describe(page.error()) + "\n");
      return;
    }
    reply(200, metrics::content_type, std::move(*page));
    return;
  }
  if (path == "/readyz") {
    auto why = not_ready_reason(*stats_);
    if (why.empty()) {
      reply(200, text_type, "ok\n");
    } else {
      reply(503, text_type, "not ready: " + why + "\n");
    }
    return;
  }
  healthz(std::move(reply));
}

void metrics_api::healthz(reply_fn reply) {
  std::optional<actors> to_ask;
  {
    std::lock_guard<std::mutex> guard{mtx_};
    to_ask = actors_;
  }
  if (!to_ask) {
    // The process is up and loading its state: alive, not yet ready (/readyz).
    reply(200, text_type, "loading\n");
    return;
  }
  auto check = std::make_shared<health_check>(std::move(reply));
  auto timeout = timeout_;
  caf::duration limit{timeout};
  gw_.ask(
    to_ask->registry, limit, [check, timeout](atom::ok) { check->answered("registry", {}, timeout); },
    [check, timeout](caf::error& err) { check->answered("registry", err, timeout); },
    atom::ping_v);
  gw_.ask(
    to_ask->persistence, limit,
    [check, timeout](atom::ok) { check->answered("persistence", {}, timeout); },
    [check, timeout](caf::error& err) { check->answered("persistence", err, timeout); },
    atom::flush_v);
}

} // namespace berth
