#pragma once

// What `berthd prestop` needs from the Kubernetes API, typed. protocols/kube/kube_client
// implements it over HTTPS (Boost.Beast + OpenSSL); tests of the hook use a fake.

#include <chrono>
#include <functional>
#include <string>
#include <vector>

#include <caf/error.hpp>
#include <caf/expected.hpp>

namespace berth::kube {

/// One taint of a Node (spec.taints[]).
struct taint {
  std::string key;
  std::string value;
  std::string effect;
};

/// The parts of a Node the hook reads. found=false: the API answered 404.
struct node_info {
  bool found = false;
  bool unschedulable = false; ///< spec.unschedulable
  std::vector<taint> taints;
};

/// One storage.k8s.io/v1 VolumeAttachment.
struct attachment {
  std::string name;     ///< metadata.name
  std::string node;     ///< spec.nodeName
  std::string attacher; ///< spec.attacher (the CSI driver name)
  std::string volume;   ///< spec.source.persistentVolumeName ("" when inline)
};

/// One page of a LIST.
struct attachment_page {
  std::vector<attachment> items;
  std::string resource_version; ///< metadata.resourceVersion of the list
  std::string next;             ///< metadata.continue ("" on the last page)
};

/// A watch event: ADDED, MODIFIED, DELETED or BOOKMARK (for BOOKMARK only
/// resource_version is meaningful).
struct attachment_event {
  std::string type;
  attachment object;
  std::string resource_version; ///< the object's metadata.resourceVersion
};

/// How a watch ended.
enum class watch_end {
  closed,  ///< the server ended the stream (or its timeoutSeconds passed): watch again from the last resourceVersion
  gone,    ///< 410 Gone (an ERROR event with code 410, or the HTTP status): list again
  stopped, ///< on_event returned false, or the deadline came
};

/// Errors: transport failures (connect, TLS, timeout) are ec::unavailable or ec::timeout
/// naming the server; 401/403 are ec::failed_precondition saying the API refused the
/// credentials (never printing the token); other statuses name the status and the
/// Status object's message. Every call is bounded by `until`.
class kube_api {
public:
  virtual ~kube_api() = default;

  /// GET /api/v1/nodes/NAME.
  virtual caf::expected<node_info> get_node(const std::string& name,
                                            std::chrono::steady_clock::time_point until) = 0;

  /// GET /apis/storage.k8s.io/v1/volumeattachments?limit=LIMIT[&continue=NEXT].
  virtual caf::expected<attachment_page> list_attachments(const std::string& next, size_t limit,
                                                          std::chrono::steady_clock::time_point until) = 0;

  /// GET /apis/storage.k8s.io/v1/volumeattachments?watch=1&resourceVersion=RV&allowWatchBookmarks=true
  /// [&timeoutSeconds=...]: calls on_event for each event until the stream ends, on_event
  /// returns false, or `until`.
  virtual caf::expected<watch_end> watch_attachments(
    const std::string& resource_version,
    const std::function<bool(const attachment_event&)>& on_event,
    std::chrono::steady_clock::time_point until) = 0;
};

} // namespace berth::kube
