#include "apps/berthd/controller_command.hpp"

#include <csignal>
#include <iostream>

#include <spdlog/spdlog.h>

#include "apps/berthd/daemon_options.hpp"
#include "apps/berthd/logging.hpp"
#include "apps/cli/command_line.hpp"
#include "apps/controller/controller_server.hpp"
#include "core/errors.hpp"
#include "protocols/kube/kube_factory.hpp"

namespace berth {

namespace {

/// The one table of the controller's options: it parses the command line and writes --help.
void describe_options(CLI::App& app, controller_options& opts) {
  command_line::prepare(app, 26);
  auto not_empty = [](const std::string& v) {
    return v.empty() ? std::string{"must not be empty"} : std::string{};
  };
  auto into = [](std::string& out) { return [&out](const std::string& v) { out = v; }; };
  command_line::value(app, "--csi-endpoint", "unix:///PATH",
                      "serve CSI Identity and Controller on this socket\n"
                      "(default $CSI_ENDPOINT)",
                      [](const std::string& v) {
                        return v.empty() ? std::string{"must not be empty"} : csi_endpoint_problem(v);
                      },
                      into(opts.csi_endpoint));
  command_line::value(app, "--kubeconfig", "FILE",
                      "reach the API through this kubeconfig (default: in-cluster,\n"
                      "the pod's service account)",
                      not_empty, into(opts.kubeconfig));
  command_line::value(app, "--driver-name", "NAME",
                      "the CSI driver's name (default berth.csi.dev)", not_empty,
                      into(opts.driver_name));
  command_line::value(app, "--csi-capabilities", "1.12|1.9", csi_capabilities_help,
                      csi_capabilities_problem, into(opts.csi_capabilities));
  command_line::value(app, "--log-format", "text|json", "log line format (default text)",
                      log_format_check(), into(opts.log_format));
  command_line::value(app, "--log-level", "LEVEL", "trace, debug, info, warn, error (default info)",
                      log_level_check(), into(opts.log_level));
  app.add_flag("--help,-h", opts.help, "this text");
}

struct controller_app {
  CLI::App app{"The CSI controller of berth on a Kubernetes cluster: serves Identity and "
               "Controller,\nrecords each volume as a BerthVolume object, and answers once "
               "the node that holds it\n(berthd --kubernetes) has carried it out. It stores "
               "nothing itself.",
               "berthd controller"};
  explicit controller_app(controller_options& opts) {
    describe_options(app, opts);
  }
};

} // namespace

std::string controller_usage() {
  controller_options opts;
  controller_app c{opts};
  return c.app.help();
}

caf::expected<controller_options> parse_controller_options(const std::vector<std::string>& args) {
  controller_options opts;
  controller_app c{opts};
  try {
    c.app.parse(command_line::for_cli11(args));
  } catch (const CLI::ParseError& e) {
    return make_error(ec::invalid_argument, command_line::message(c.app, e));
  }
  if (opts.help) {
    return opts;
  }
  if (c.app.get_option("--csi-endpoint")->count() == 0) {
    const char* env = std::getenv("CSI_ENDPOINT");
    opts.csi_endpoint = env ? env : "";
    if (opts.csi_endpoint.empty()) {
      return make_error(ec::invalid_argument,
                        "no CSI endpoint: pass --csi-endpoint unix:///PATH or set CSI_ENDPOINT");
    }
    if (auto problem = csi_endpoint_problem(opts.csi_endpoint); !problem.empty()) {
      return make_error(ec::invalid_argument, "CSI_ENDPOINT " + problem);
    }
  }
  return opts;
}

int run_controller(const std::vector<std::string>& args) {
  auto opts = parse_controller_options(args);
  if (!opts) {
    std::cerr << "berthd controller: " << describe(opts.error()) << "\n\n" << controller_usage();
    return 2;
  }
  if (opts->help) {
    std::cout << controller_usage();
    return 0;
  }
  // Signals are taken by sigwait below; block them before any thread starts.
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGTERM);
  sigaddset(&set, SIGINT);
  pthread_sigmask(SIG_BLOCK, &set, nullptr);
  std::signal(SIGPIPE, SIG_IGN);
  setup_logging(opts->log_format, opts->log_level);
  auto api = kube::make_object_api(opts->kubeconfig);
  if (!api) {
    spdlog::critical("cannot set up the Kubernetes API client ({}): {}",
                     opts->kubeconfig.empty() ? "in-cluster" : "--kubeconfig " + opts->kubeconfig,
                     describe(api.error()));
    return 1;
  }
  controller::controller_config cfg;
  cfg.endpoint = opts->csi_endpoint;
  cfg.driver_name = opts->driver_name;
  cfg.advertise_since_1_10 = opts->csi_capabilities != "1.9";
  controller::controller_server server{**api, cfg};
  if (auto err = server.start()) {
    spdlog::critical("{}", describe(err));
    return 1;
  }
  int sig = 0;
  sigwait(&set, &sig);
  spdlog::info("signal {} received, stopping", sig);
  server.stop();
  return 0;
}

} // namespace berth
