#include "apps/controller/volume_condition.hpp"

#include <string>

#include "core/text.hpp"

namespace berth::controller {

void encode_object_condition(const kube::volume_object& obj,
                             const std::optional<kube::node_readiness>& node,
                             csi::v1::VolumeCondition* out) {
  std::string message;
  auto add = [&message](const std::string& one) { message += message.empty() ? one : "; " + one; };
  const auto volume = "volume " + quote_input(obj.spec.csi_name);
  const auto node_name = "node " + quote_input(obj.spec.node);
  if (!node) {
    add(node_name + " no longer exists: the data of " + volume
        + " was on it and went with it; delete the volume");
  } else if (!node->status.empty() && node->status != "True") {
    add(node_name + " is not Ready (" + node->status
        + (node->since.empty() ? std::string{} : " since " + node->since)
        + (node->message.empty() ? std::string{} : ": " + node->message) + "): the data of "
        + volume + " is on it and cannot be reached until the node is back");
  }
  if (obj.status.phase == kube::phase_failed) {
    add(obj.status.message.empty() ? node_name + " reported " + volume + " Failed"
                                   : obj.status.message);
  }
  out->set_abnormal(!message.empty());
  out->set_message(message.empty() ? "volume is healthy" : message);
}

} // namespace berth::controller
