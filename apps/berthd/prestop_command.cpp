#include "apps/berthd/prestop_command.hpp"

#include <iostream>

#include <spdlog/spdlog.h>

#include "apps/cli/command_line.hpp"
#include "apps/berthd/daemon_options.hpp"
#include "apps/prestop/prestop_wait.hpp"
#include "core/errors.hpp"

namespace berth {

namespace {

caf::error usage_error(const std::string& msg) {
  return make_error(ec::invalid_argument, msg);
}

/// The longest deadline accepted: a day is already far beyond any grace period.
constexpr long max_deadline_s = 86400;

/// The one table of the hook's options: it parses the command line and writes --help.
/// `opts` receives the values.
void describe_options(CLI::App& app, prestop_options& opts) {
  using command_line::in_quotes;
  command_line::prepare(app, 24);
  app.footer("Always exits 0 (except for bad usage): the log says what happened.");
  auto not_empty = [](const std::string& v) {
    return v.empty() ? std::string{"must not be empty"} : std::string{};
  };
  auto into = [](std::string& out) { return [&out](const std::string& v) { out = v; }; };
  command_line::value(app, "--node-name", "NAME",
                      "this node (default $CSI_NODE_NAME, else $NODE_NAME)", not_empty,
                      into(opts.node_name));
  command_line::value(app, "--driver-name", "NAME",
                      "the CSI driver whose VolumeAttachments count (default berth.csi.dev)",
                      not_empty, into(opts.driver_name));
  command_line::value(
    app, "--deadline-s", "N",
    "give up after N seconds; keep it below the pod's\n"
    "terminationGracePeriodSeconds (default 120)",
    [](const std::string& v) {
      bool ok = !v.empty() && v.size() <= 9 && v.find_first_not_of("0123456789") == std::string::npos
                && std::stol(v) >= 1 && std::stol(v) <= max_deadline_s;
      return ok ? std::string{}
                : "expects a number of seconds from 1 to " + std::to_string(max_deadline_s)
                    + ", got " + in_quotes(v);
    },
    [&](const std::string& v) { opts.deadline_s = std::stol(v); });
  command_line::value(app, "--kubeconfig", "FILE",
                      "reach the API through this kubeconfig (default: in-cluster,\n"
                      "the pod's service account)",
                      not_empty, into(opts.kubeconfig));
  command_line::value(app, "--admin-socket", "PATH",
                      "berthd's admin socket (default " + opts.admin_socket + ")", not_empty,
                      into(opts.admin_socket));
  command_line::value(app, "--log-file", "FILE",
                      "append the log to FILE instead of stderr; in a pod,\n"
                      "/proc/1/fd/2 puts it in the container's log (kubectl logs),\n"
                      "since kubelet keeps no output of a hook that succeeds",
                      not_empty, into(opts.log_file));
  app.add_flag("--help,-h", opts.help, "this text");
}

/// The app describe_options fills, named and described as --help shows it.
struct prestop_app {
  CLI::App app{"The preStop hook of berth's node container: when the node is being drained "
               "(cordoned,\ntainted for removal, or gone), waits until no VolumeAttachment of "
               "this driver remains\nfor the node and berthd has nothing staged or published, "
               "or until the deadline.",
               "berthd prestop"};
  explicit prestop_app(prestop_options& opts) {
    opts.admin_socket = daemon_options{}.admin_socket;
    describe_options(app, opts);
  }
};

} // namespace

std::string prestop_usage() {
  prestop_options opts;
  prestop_app p{opts};
  return p.app.help();
}

caf::expected<prestop_options>
parse_prestop_options(const std::vector<std::string>& args,
                      const std::function<const char*(const char*)>& env) {
  prestop_options opts;
  prestop_app p{opts};
  try {
    p.app.parse(command_line::for_cli11(args));
  } catch (const CLI::ParseError& e) {
    return usage_error(command_line::message(p.app, e));
  }
  if (p.app.get_option("--node-name")->count() == 0 && !opts.help) {
    for (const char* var : {"CSI_NODE_NAME", "NODE_NAME"}) {
      const char* v = env(var);
      if (v && *v) {
        opts.node_name = v;
        break;
      }
    }
    if (opts.node_name.empty()) {
      return usage_error("no node name: pass --node-name, or set CSI_NODE_NAME or NODE_NAME "
                         "(the downward API's spec.nodeName)");
    }
  }
  return opts;
}

int run_prestop(const std::vector<std::string>& args, const kube_factory& make,
                const log_setup& setup_log) {
  auto opts = parse_prestop_options(args, [](const char* var) { return std::getenv(var); });
  if (!opts) {
    std::cerr << "berthd prestop: " << describe(opts.error()) << "\n\n" << prestop_usage();
    return 2;
  }
  if (opts->help) {
    std::cout << prestop_usage();
    return 0;
  }
  if (setup_log) {
    setup_log(opts->log_file);
  }
  auto api = make(opts->kubeconfig);
  if (!api) {
    spdlog::error("prestop: cannot set up the Kubernetes API client ({}): {}; not waiting for "
                  "node {} to drain",
                  opts->kubeconfig.empty() ? "in-cluster" : "--kubeconfig " + opts->kubeconfig,
                  describe(api.error()), opts->node_name);
    return 0;
  }
  drain::prestop_config cfg;
  cfg.node = opts->node_name;
  cfg.driver = opts->driver_name;
  cfg.admin_socket = opts->admin_socket;
  cfg.deadline = std::chrono::seconds{opts->deadline_s};
  drain::wait_for_drain(cfg, std::shared_ptr<kube::kube_api>{std::move(*api)});
  return 0;
}

} // namespace berth
