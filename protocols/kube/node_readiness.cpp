#include "protocols/kube/node_readiness.hpp"

#include <rapidjson/document.h>

#include "core/json_text.hpp"
#include "protocols/kube/detail/object_json.hpp"

namespace berth::kube {

caf::expected<node_readiness> parse_node_readiness(const std::string& node_json) {
  rapidjson::Document doc;
  if (auto err = detail::parse_document(node_json, "Node", doc)) {
    return err;
  }
  node_readiness out;
  auto list = json_member(json_object(doc, "status"), "conditions");
  if (!list || !list->IsArray()) {
    return out;
  }
  for (const auto& c : list->GetArray()) {
    if (c.IsObject() && json_text(c, "type") == "Ready") {
      out.status = json_text(c, "status");
      out.since = json_text(c, "lastTransitionTime");
      out.reason = json_text(c, "reason");
      out.message = json_text(c, "message");
    }
  }
  return out;
}

} // namespace berth::kube
