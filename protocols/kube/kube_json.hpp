#pragma once

// The Kubernetes API's JSON shapes that berth reads (RapidJSON): Node, VolumeAttachment(List),
// watch events and Status. Unknown fields are ignored, missing optional ones take defaults.

#include <string>

#include <caf/expected.hpp>

#include "protocols/kube/kube_api.hpp"
#include "protocols/kube/object_api.hpp"

namespace berth::kube {

/// The parts of a metav1.Status the client reports.
struct api_status {
  int code = 0;        ///< "code" (the HTTP status), 0 when absent
  std::string reason;  ///< "reason" (NotFound, Expired, Unauthorized, ...)
  std::string message; ///< "message"
};

/// A Node's spec.unschedulable and spec.taints (found = true).
caf::expected<node_info> parse_node(const std::string& json);

/// A VolumeAttachmentList: items, metadata.resourceVersion, metadata.continue.
caf::expected<attachment_page> parse_attachment_list(const std::string& json);

/// One decoded watch line. type ERROR carries `status`.
struct watch_line {
  attachment_event event;
  api_status status;
};

/// One line of a watch stream: {"type": ..., "object": ...}.
caf::expected<watch_line> parse_watch_line(const std::string& json);

/// Any kind's List: each item written back as JSON text, metadata.resourceVersion and
/// metadata.continue.
caf::expected<object_page> parse_object_list(const std::string& json);

/// One decoded line of a watch of any kind. type ERROR carries `status`.
struct object_watch_line {
  object_event event;
  api_status status;
};

/// One line of a watch stream of any kind.
caf::expected<object_watch_line> parse_object_watch_line(const std::string& json);

/// A Status object; empty fields when the body is not one (e.g. a proxy's HTML page).
api_status parse_status(const std::string& json);

} // namespace berth::kube
