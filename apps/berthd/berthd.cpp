// berthd: durable volumes for containers. See docs/architecture.md.

#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <string>
#include <vector>

#include <spdlog/spdlog.h>

#include "apps/berthd/controller_command.hpp"
#include "apps/berthd/daemon.hpp"
#include "apps/berthd/logging.hpp"
#include "apps/berthd/prestop_command.hpp"
#include "core/build_info.hpp"
#include "core/errors.hpp"
#include "protocols/kube/kube_factory.hpp"

namespace {

/// `berthd prestop ...`: the preStop hook (apps/berthd/prestop_command.hpp).
int prestop(int argc, char** argv) {
  std::signal(SIGPIPE, SIG_IGN);
  berth::kube_factory make = [](const std::string& kubeconfig) {
    return berth::kube::make_kube_api(kubeconfig);
  };
  int rc = berth::run_prestop(std::vector<std::string>(argv + 2, argv + argc), make,
                              [](const std::string& file) {
                                berth::setup_logging("text", "info", file);
                              });
  // A watch may still be blocked in the client on another thread (it ends by the
  // deadline): leave without running static destructors under it.
  spdlog::default_logger()->flush();
  std::fflush(stdout);
  std::fflush(stderr);
  std::_Exit(rc);
}

} // namespace

int main(int argc, char** argv) {
  if (argc >= 2 && std::string{argv[1]} == "prestop") {
    return prestop(argc, argv);
  }
  if (argc >= 2 && std::string{argv[1]} == "controller") {
    return berth::run_controller(std::vector<std::string>(argv + 2, argv + argc));
  }
  auto opts = berth::parse_daemon_options(argc, argv);
  if (!opts) {
    std::cerr << "berthd: " << berth::describe(opts.error()) << "\n";
    return 2;
  }
  if (opts->help) {
    std::cout << berth::daemon_usage();
    return 0;
  }
  if (opts->version) {
    std::cout << "berthd " << BERTH_VERSION << " (revision " << berth::this_build().revision << ")\n";
    return 0;
  }
  // Signals are taken by sigwait in run_daemon; block them before any thread starts.
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGTERM);
  sigaddset(&set, SIGINT);
  sigaddset(&set, SIGHUP); // a closed terminal or a stray reload must not kill berthd
  pthread_sigmask(SIG_BLOCK, &set, nullptr);
  std::signal(SIGPIPE, SIG_IGN);
  return berth::run_daemon(*opts);
}
