// berthd: durable volumes for containers. See docs/architecture.md.

#include <csignal>
#include <iostream>

#include "apps/daemon.hpp"
#include "core/errors.hpp"

int main(int argc, char** argv) {
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
    std::cout << "berthd " << BERTH_VERSION << "\n";
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
