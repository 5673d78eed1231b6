#include "protocols/kube/kube_factory.hpp"

#include "protocols/kube/kube_client.hpp"
#include "protocols/kube/kube_config.hpp"

namespace berth::kube {

namespace {

caf::expected<std::unique_ptr<kube_client>> make_client(const std::string& kubeconfig) {
  auto cfg = kubeconfig.empty() ? in_cluster_config() : kubeconfig_config(kubeconfig);
  if (!cfg) {
    return cfg.error();
  }
  return kube_client::make(std::move(*cfg));
}

} // namespace

caf::expected<std::unique_ptr<kube_api>> make_kube_api(const std::string& kubeconfig) {
  auto client = make_client(kubeconfig);
  if (!client) {
    return client.error();
  }
  return std::unique_ptr<kube_api>{std::move(*client)};
}

caf::expected<std::unique_ptr<object_api>> make_object_api(const std::string& kubeconfig) {
  auto client = make_client(kubeconfig);
  if (!client) {
    return client.error();
  }
  return std::unique_ptr<object_api>{std::move(*client)};
}

} // namespace berth::kube
