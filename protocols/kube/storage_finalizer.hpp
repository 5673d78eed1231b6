#pragma once

// The release of the storage finalizer of a BerthVolume or BerthSnapshot, which the node
// agent writes once the storage is removed and the controller writes when the object's
// node is gone for good.

#include <chrono>
#include <string>

#include <caf/error.hpp>

#include "protocols/kube/object_api.hpp"

namespace berth::kube {

/// Removes berth's storage finalizer from the object `name` of `kind` while it is the object
/// `uid`, reading it again and retrying while another writer changes it in between. An
/// object gone, another object under the name (deleted and made again: its finalizer
/// guards other storage), or no finalizer to remove is success, and nothing is written.
caf::error release_storage_finalizer(object_api& api, const resource_ref& kind,
                                     const std::string& name,
                                     const std::string& uid,
                                     std::chrono::steady_clock::time_point until);

} // namespace berth::kube
