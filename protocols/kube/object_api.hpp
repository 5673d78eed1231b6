#pragma once

// The Kubernetes API's verbs on objects of any kind, as JSON text: what berth's cluster mode
// (the controller and the node agent) needs for its custom resources, Nodes and Events.
// protocols/kube/kube_client implements it over HTTPS; the objects' shapes are
// berth_objects.hpp's. docs/kubernetes-api.md says which server behaviours it relies on.

#include <chrono>
#include <functional>
#include <string>
#include <vector>

#include <caf/expected.hpp>

#include "protocols/kube/kube_api.hpp"

namespace berth::kube {

/// Where a kind's objects live: "/apis/GROUP/VERSION" (or "/api/v1") and the plural,
/// with the namespace for a namespaced kind ("" for a cluster-scoped one).
struct resource_ref {
  std::string prefix;
  std::string plural;
  std::string ns;

  /// The collection's path, e.g. /apis/berth.csi.dev/v1alpha1/berthvolumes.
  std::string collection() const;
};

/// Selectors and paging of a LIST or WATCH.
struct list_query {
  std::string label_selector; ///< e.g. "berth.csi.dev/node=n1"
  std::string field_selector; ///< e.g. "metadata.name=x"
  size_t limit = 0;           ///< 0: the server's default (no paging)
  std::string next;           ///< metadata.continue of the page before
};

/// One page of a LIST: each item as JSON text.
struct object_page {
  std::vector<std::string> items;
  std::string resource_version;
  std::string next; ///< "" on the last page
};

/// A watch event: ADDED, MODIFIED, DELETED or BOOKMARK, the object as JSON text, and its
/// metadata.resourceVersion (the one to resume from).
struct object_event {
  std::string type;
  std::string object;
  std::string resource_version;
};

/// Errors as kube_api's, and: 404 is ec::not_found, 409 AlreadyExists ec::already_exists,
/// 409 Conflict (a stale resourceVersion) ec::aborted, 422 Invalid ec::invalid_argument with
/// the server's message. Every call is bounded by `until`.
class object_api {
public:
  virtual ~object_api() = default;

  /// GET COLLECTION/NAME.
  virtual caf::expected<std::string> get_object(const resource_ref& kind, const std::string& name,
                                                std::chrono::steady_clock::time_point until) = 0;

  /// GET COLLECTION?labelSelector=..&fieldSelector=..&limit=..&continue=..
  virtual caf::expected<object_page> list_objects(const resource_ref& kind, const list_query& q,
                                                  std::chrono::steady_clock::time_point until) = 0;

  /// POST COLLECTION: the object as the server stored it.
  virtual caf::expected<std::string> create_object(const resource_ref& kind,
                                                   const std::string& json,
                                                   std::chrono::steady_clock::time_point until) = 0;

  /// PATCH COLLECTION/NAME[/SUBRESOURCE] with an application/merge-patch+json body; a
  /// patch naming metadata.resourceVersion is refused (ec::aborted) when the object changed.
  virtual caf::expected<std::string> merge_patch(const resource_ref& kind, const std::string& name,
                                                 const std::string& subresource,
                                                 const std::string& patch,
                                                 std::chrono::steady_clock::time_point until) = 0;

  /// DELETE COLLECTION/NAME: what the server answered (the object, marked for deletion,
  /// while finalizers hold it; else a Status).
  virtual caf::expected<std::string> delete_object(const resource_ref& kind,
                                                   const std::string& name,
                                                   std::chrono::steady_clock::time_point until) = 0;

  /// WATCH COLLECTION from `resource_version` ("" = now, with an ADDED for each object),
  /// with bookmarks: on_event for each event until the stream ends, on_event returns false,
  /// or `until`.
  virtual caf::expected<watch_end> watch_objects(const resource_ref& kind, const list_query& q,
                                                 const std::string& resource_version,
                                                 const std::function<bool(const object_event&)>& on_event,
                                                 std::chrono::steady_clock::time_point until) = 0;

  /// Ends every call in progress at once (each fails, ec::unavailable) and refuses new
  /// ones: for a stop, so that no thread waits out a watch. Any thread may call it.
  virtual void cancel_calls() = 0;
};

} // namespace berth::kube
