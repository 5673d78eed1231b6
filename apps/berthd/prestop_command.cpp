#include "apps/berthd/prestop_command.hpp"

#include <iostream>
#include <map>

#include <spdlog/spdlog.h>

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

} // namespace

std::string prestop_usage() {
  return R"(Usage: berthd prestop [options]

The preStop hook of berth's node container: when the node is being drained (cordoned,
tainted for removal, or gone), waits until no VolumeAttachment of this driver remains
for the node and berthd has nothing staged or published, or until the deadline.
Always exits 0 (except for bad usage): the log says what happened.

  --node-name NAME      this node (default $CSI_NODE_NAME, else $NODE_NAME)
  --driver-name NAME    the CSI driver whose VolumeAttachments count (default berth.csi.dev)
  --deadline-s N        give up after N seconds; keep it below the pod's
                        terminationGracePeriodSeconds (default 120)
  --kubeconfig FILE     reach the API through this kubeconfig (default: in-cluster,
                        the pod's service account)
  --admin-socket PATH   berthd's admin socket (default /run/berth/admin.sock)
  --log-file FILE       append the log to FILE instead of stderr; in a pod,
                        /proc/1/fd/2 puts it in the container's log (kubectl logs),
                        since kubelet keeps no output of a hook that succeeds
  --help                this text
)";
}

caf::expected<prestop_options>
parse_prestop_options(const std::vector<std::string>& args,
                      const std::function<const char*(const char*)>& env) {
  prestop_options opts;
  opts.admin_socket = daemon_options{}.admin_socket;
  bool node_given = false;
  std::map<std::string, std::string*> strings{{"--node-name", &opts.node_name},
                                              {"--driver-name", &opts.driver_name},
                                              {"--kubeconfig", &opts.kubeconfig},
                                              {"--admin-socket", &opts.admin_socket},
                                              {"--log-file", &opts.log_file}};
  for (size_t i = 0; i < args.size(); ++i) {
    std::string flag = args[i];
    std::string value;
    bool has_value = false;
    if (auto eq = flag.find('='); flag.rfind("--", 0) == 0 && eq != std::string::npos) {
      value = flag.substr(eq + 1);
      flag = flag.substr(0, eq);
      has_value = true;
    }
    if (flag == "--help" || flag == "-h") {
      opts.help = true;
      continue;
    }
    if (strings.count(flag) == 0 && flag != "--deadline-s") {
      return usage_error("unknown option \"" + args[i] + "\"");
    }
    if (!has_value) {
      if (i + 1 >= args.size()) {
        return usage_error(flag + " needs a value");
      }
      value = args[++i];
    }
    if (flag == "--deadline-s") {
      if (value.empty() || value.size() > 9
          || value.find_first_not_of("0123456789") != std::string::npos
          || std::stol(value) < 1 || std::stol(value) > max_deadline_s) {
        return usage_error("--deadline-s expects a number of seconds from 1 to "
                           + std::to_string(max_deadline_s) + ", got \"" + value + "\"");
      }
      opts.deadline_s = std::stol(value);
      continue;
    }
    if (value.empty()) {
      return usage_error(flag + " must not be empty");
    }
    *strings[flag] = value;
    node_given = node_given || flag == "--node-name";
  }
  if (!node_given && !opts.help) {
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
