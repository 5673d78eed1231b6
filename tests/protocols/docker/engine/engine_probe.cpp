// docker-engine-probe: the Docker Engine API client on the command line, for
// tests/e2e/docker_engine_e2e.sh against a real dockerd. One line per fact, flushed at once:
//
//   docker-engine-probe unix:///PATH ping
//   docker-engine-probe unix:///PATH info
//   docker-engine-probe unix:///PATH containers
//   docker-engine-probe unix:///PATH events SECONDS   (the raw stream; stopped from another thread)
//   docker-engine-probe unix:///PATH follow SECONDS   (the reconnecting follower)
//
// Exit 0, or 1 with the error on stderr.

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <string>
#include <thread>

#include <spdlog/sinks/stdout_sinks.h>
#include <spdlog/spdlog.h>

#include "core/errors.hpp"
#include "protocols/docker/engine/engine_client.hpp"
#include "protocols/docker/engine/engine_url.hpp"
#include "protocols/docker/engine/event_follower.hpp"

using namespace berth;
using namespace berth::docker_engine;

namespace {

int fail(const caf::error& err) {
  std::cerr << "error: " << describe(err) << std::endl;
  return 1;
}

std::string who(const engine_instance& i) {
  return "pid=" + std::to_string(i.pid) + " start_ticks=" + std::to_string(i.start_ticks);
}

void print_event(const container_event& ev) {
  std::cout << "event " << ev.action << " " << ev.container_id << " exit=" << ev.exit_code
            << " time_nano=" << ev.time_nano << std::endl;
}

} // namespace

int main(int argc, char** argv) {
  if (argc < 3) {
    std::cerr << "usage: docker-engine-probe unix:///PATH ping|info|containers|events S|follow S\n";
    return 2;
  }
  // Facts on stdout, the client's log on stderr.
  spdlog::set_default_logger(spdlog::stderr_logger_mt("probe"));
  spdlog::set_level(spdlog::level::debug);
  auto path = parse_api_url(argv[1]);
  if (!path) {
    return fail(path.error());
  }
  engine_client client{*path};
  std::string cmd = argv[2];
  auto seconds = std::chrono::seconds{argc > 3 ? std::atoi(argv[3]) : 10};
  if (cmd == "ping") {
    auto r = client.ping();
    if (!r) {
      return fail(r.error());
    }
    std::cout << "api_version=" << r->api_version << " server=" << r->server << " " << who(r->instance)
              << std::endl;
    return 0;
  }
  if (cmd == "info") {
    auto r = client.info();
    if (!r) {
      return fail(r.error());
    }
    std::cout << "id=" << r->id << " root=" << r->root_dir << " version=" << r->server_version
              << " time=" << r->system_time << " " << who(r->instance) << std::endl;
    return 0;
  }
  if (cmd == "containers") {
    auto r = client.containers();
    if (!r) {
      return fail(r.error());
    }
    for (const auto& c : r->items) {
      std::cout << "container " << c.id << " " << c.state << " " << (c.names.empty() ? "-" : c.names[0]);
      for (const auto& v : c.volumes) {
        std::cout << " volume=" << v.name << ":" << v.driver << ":" << v.destination;
      }
      std::cout << std::endl;
    }
    return 0;
  }
  stop_signal stop;
  std::thread timer{[&] { stop.wait_for(seconds); stop.request_stop(); }};
  int rc = 0;
  if (cmd == "events") {
    event_handler h;
    h.on_open = [](const engine_instance& i) { std::cout << "open " << who(i) << std::endl; };
    h.on_event = print_event;
    auto r = client.events(h, stop);
    if (!r) {
      rc = fail(r.error());
    } else {
      std::cout << (*r == events_end::stopped ? "stopped" : *r == events_end::idle ? "idle" : "closed")
                << std::endl;
    }
  } else if (cmd == "follow") {
    follow_handler h;
    h.on_open = [](const engine_instance& i, bool changed) {
      std::cout << "open " << who(i) << " changed=" << (changed ? 1 : 0) << std::endl;
    };
    h.on_event = print_event;
    follow_events(client, h, stop);
    std::cout << "stopped" << std::endl;
  } else {
    std::cerr << "unknown command " << cmd << "\n";
    rc = 2;
  }
  stop.request_stop();
  timer.join();
  return rc;
}
