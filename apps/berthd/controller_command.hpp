#pragma once

// `berthd controller`: the cluster's CSI controller (apps/controller). Parses its options,
// makes the Kubernetes client, serves until SIGTERM or SIGINT.

#include <string>
#include <vector>

#include <caf/expected.hpp>

namespace berth {

struct controller_options {
  std::string csi_endpoint;             ///< --csi-endpoint, required
  std::string kubeconfig;               ///< "" = in-cluster
  std::string driver_name = "berth.csi.dev";
  std::string log_level = "info";
  std::string log_format = "text";
  std::string csi_capabilities = "1.12"; ///< --csi-capabilities: 1.12 or 1.9
  bool help = false;
};

/// Parses the arguments after "berthd controller". Errors name the bad option.
caf::expected<controller_options> parse_controller_options(const std::vector<std::string>& args);

/// The usage text.
std::string controller_usage();

/// Runs the controller: 0 after a signal, 1 when it cannot start, 2 for bad usage.
int run_controller(const std::vector<std::string>& args);

} // namespace berth
