#pragma once

// How berthd obtains its Kubernetes API client. Declared here, defined by the client
// module (protocols/kube/kube_client, CMake target berth_kube); berthd links it only
// when that target exists (apps/CMakeLists.txt).

#include <memory>
#include <string>

#include <caf/expected.hpp>

#include "protocols/kube/kube_api.hpp"
#include "protocols/kube/object_api.hpp"

namespace berth::kube {

/// A client configured from `kubeconfig` (server, CA, token or client certificate of
/// its current-context), or from the pod's service account when it is "" (in-cluster).
/// Fails naming the file or the missing setting.
caf::expected<std::unique_ptr<kube_api>> make_kube_api(const std::string& kubeconfig);

/// The same client, for the object verbs of berth's cluster mode.
caf::expected<std::unique_ptr<object_api>> make_object_api(const std::string& kubeconfig);

} // namespace berth::kube
