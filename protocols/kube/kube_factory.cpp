#include "protocols/kube/kube_factory.hpp"

#include "protocols/kube/kube_client.hpp"
#include "protocols/kube/kube_config.hpp"

namespace berth::kube {

caf::expected<std::unique_ptr<kube_api>> make_kube_api(const std::string& kubeconfig) {
  auto cfg = kubeconfig.empty() ? in_cluster_config() : kubeconfig_config(kubeconfig);
  if (!cfg) {
    return cfg.error();
  }
  auto client = kube_client::make(std::move(*cfg));
  if (!client) {
    return client.error();
  }
  return std::unique_ptr<kube_api>{std::move(*client)};
}

} // namespace berth::kube
