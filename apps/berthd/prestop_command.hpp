#pragma once

// `berthd prestop`: the node container's preStop hook (docs/design.md, "A node drain
// waits for its volumes"). Parses its options, makes the Kubernetes client and runs
// drain::wait_for_drain.

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <caf/expected.hpp>

#include "protocols/kube/kube_api.hpp"

namespace berth {

/// The hook's command line.
struct prestop_options {
  std::string node_name;                   ///< --node-name, else $CSI_NODE_NAME, else $NODE_NAME
  std::string driver_name = "berth.csi.dev";
  long deadline_s = 120;                   ///< keep it below terminationGracePeriodSeconds
  std::string kubeconfig;                  ///< "" = in-cluster
  std::string admin_socket;                ///< default: berthd's --admin-socket default
  /// Where the log goes ("" = stderr). A preStop hook's output reaches no log of its
  /// own, so a pod names /proc/1/fd/2: berthd's stderr, i.e. `kubectl logs`.
  std::string log_file;
  bool help = false;
};

/// Parses `--flag VALUE` and `--flag=VALUE` (args exclude "berthd prestop");
/// `env` reads the environment. Errors (ec::invalid_argument) name the bad option.
caf::expected<prestop_options>
parse_prestop_options(const std::vector<std::string>& args,
                      const std::function<const char*(const char*)>& env);

/// The usage text.
std::string prestop_usage();

/// Makes the Kubernetes client from --kubeconfig ("" = in-cluster).
using kube_factory =
  std::function<caf::expected<std::unique_ptr<kube::kube_api>>(const std::string& kubeconfig)>;

/// Sets up the log for --log-file ("" = stderr).
using log_setup = std::function<void(const std::string& log_file)>;

/// Runs the hook with the Kubernetes client `make` builds; logs through spdlog's
/// default logger, set up by `setup_log` when given. Returns 2 for bad usage (the
/// message and the usage on stderr), else 0, whatever happened: kubelet ignores a
/// hook's exit code, the log is what an operator reads.
int run_prestop(const std::vector<std::string>& args, const kube_factory& make,
                const log_setup& setup_log = {});

} // namespace berth
