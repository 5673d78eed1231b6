#pragma once

// What the cluster controller says of a volume's health (ListVolumes, ControllerGetVolume):
// what it can see from the API server without asking the node, its Node gone or not Ready,
// and the failure its node reported in the object's status (docs/design.md, "Volume
// health").

#include <optional>

#include "protocols/kube/berth_objects.hpp"
#include "protocols/kube/node_readiness.hpp"

#include "csi.pb.h"

namespace berth::controller {

/// The condition of `obj`, whose Node's Ready condition is `node` (nullopt: the Node does
/// not exist).
void encode_object_condition(const kube::volume_object& obj,
                             const std::optional<kube::node_readiness>& node,
                             csi::v1::VolumeCondition* out);

} // namespace berth::controller
