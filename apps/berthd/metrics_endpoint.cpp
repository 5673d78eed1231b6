#include "apps/berthd/metrics_endpoint.hpp"

#include <chrono>

#include <spdlog/spdlog.h>

#include "core/errors.hpp"
#include "core/limits.hpp"

namespace berth {

namespace {

http_server_limits metrics_limits() {
  http_server_limits lim;
  lim.body_limit = limits::max_metrics_request_bytes;
  lim.max_connections = limits::max_metrics_connections;
  return lim;
}

} // namespace

metrics_endpoint::metrics_endpoint(caf::actor_system& sys, std::shared_ptr<const telemetry> stats)
  : guard_(io_.get_executor()), api_(sys, std::move(stats)),
    server_(io_,
            [this](const std::string& method, const std::string& target, std::string,
                   reply_fn reply, const caller&) { api_.handle(method, target, std::move(reply)); },
            metrics_limits(), "metrics") {
}

metrics_endpoint::~metrics_endpoint() {
  stop();
}

caf::expected<std::string> metrics_endpoint::start(const std::string& address) {
  auto bound = server_.listen(address);
  if (!bound) {
    return make_error(ec::unavailable,
                      "cannot serve metrics on --metrics-address " + address + ": "
                        + describe(bound.error())
                        + "; give another HOST:PORT with --metrics-address, or "
                          "--metrics-address \"\" to turn the endpoint off");
  }
  thread_ = std::thread{[this] { io_.run(); }};
  spdlog::info("metrics listening on {}", *bound); // tests parse this line: keep it so
  return bound;
}

void metrics_endpoint::attach(registry_actor registry, persistence_actor persistence) {
  api_.attach(std::move(registry), std::move(persistence));
}

void metrics_endpoint::stop() {
  server_.stop();
  if (!thread_.joinable()) {
    return;
  }
  // Answers already being written get a moment; a scrape is small.
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(1);
  while (server_.in_flight() > 0 && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  guard_.reset();
  io_.stop();
  thread_.join();
}

} // namespace berth
