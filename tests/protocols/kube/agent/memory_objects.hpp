#pragma once

// An object_api held in memory, for tests of the node agent and the controller's store:
// the write rules of the Kubernetes API server that berth relies on (docs/kubernetes-api.md),
// as tests/kube_apiserver/standin applies them over HTTPS, without the wire.
//   - create sets uid, resourceVersion and generation 1; a second object of a name is
//     ec::already_exists;
//   - a merge patch naming metadata.resourceVersion is refused (ec::aborted) when the object
//     changed; the "status" subresource writes only status, the main resource all but status;
//     generation grows when anything but metadata and status changes; a write that changes
//     nothing makes no event;
//   - delete of an object with finalizers sets deletionTimestamp; the write that empties its
//     finalizers then deletes it; a new finalizer on an object being deleted is refused;
//   - watch from a resourceVersion replays what came after it, and answers gone (410) from
//     one older than the last expire_watches();
//   - an Event about a cluster-scoped object is refused (ec::invalid_argument, the server's
//     422) outside the namespace "default".
// A test can run a hook before each call (to hold it, or to fail it) and read what was
// written. Thread-safe.

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include <caf/error.hpp>

#include "protocols/kube/object_api.hpp"

namespace berth::test {

/// One call as the hook sees it: its verb (get, list, create, patch, delete, watch), the
/// collection's plural, the object's name ("" for list, watch and create), the
/// subresource and the body.
struct object_call {
  std::string verb;
  std::string plural;
  std::string name;
  std::string subresource;
  std::string body;
};

class memory_objects : public kube::object_api {
public:
  /// Runs at the start of every call, outside the store's lock; an error it returns is the
  /// call's answer.
  using hook = std::function<caf::error(const object_call&)>;

  void set_hook(hook h);

  /// The object as stored, or nullopt.
  std::optional<std::string> object(const std::string& plural, const std::string& name);

  /// Every patch of `name`'s subresource (""/"status") that was applied, in order.
  std::vector<std::string> patches(const std::string& name, const std::string& subresource);

  /// How many calls of `verb` were made.
  int calls(const std::string& verb);

  /// The resourceVersion of the newest watch event a watcher has taken in (its on_event
  /// returned), 0 before any.
  uint64_t delivered_through();

  /// Removes `name` at once, whatever its finalizers, and tells no watch: as if the event
  /// was lost while no watch ran.
  void erase_unseen(const std::string& plural, const std::string& name);

  /// Ends every watch with gone (410), and answers gone to a watch from any resourceVersion
  /// before now: what an API server does once it compacted its history.
  void expire_watches();

  // -- object_api ------------------------------------------------------------------------
  caf::expected<std::string> get_object(const kube::resource_ref& kind, const std::string& name,
                                        std::chrono::steady_clock::time_point until) override;
  caf::expected<kube::object_page> list_objects(const kube::resource_ref& kind,
                                                const kube::list_query& q,
                                                std::chrono::steady_clock::time_point until) override;
  caf::expected<std::string> create_object(const kube::resource_ref& kind, const std::string& json,
                                           std::chrono::steady_clock::time_point until) override;
  caf::expected<std::string> merge_patch(const kube::resource_ref& kind, const std::string& name,
                                         const std::string& subresource, const std::string& patch,
                                         std::chrono::steady_clock::time_point until) override;
  caf::expected<std::string> delete_object(const kube::resource_ref& kind, const std::string& name,
                                           std::chrono::steady_clock::time_point until) override;
  caf::expected<kube::watch_end>
  watch_objects(const kube::resource_ref& kind, const kube::list_query& q,
                const std::string& resource_version,
                const std::function<bool(const kube::object_event&)>& on_event,
                std::chrono::steady_clock::time_point until) override;
  void cancel_calls() override;

private:
  struct event {
    uint64_t rv;
    std::string plural;
    std::string type;
    std::string object;
  };

  caf::error before(object_call call);
  /// Stores `json` as `plural`'s object under a new resourceVersion and tells the watches.
  std::string write_locked(const std::string& plural, const std::string& type, std::string json);

  std::mutex mu_;
  std::condition_variable changed_;
  hook hook_;
  std::map<std::string, std::map<std::string, std::string>> objects_; ///< plural -> name -> JSON
  std::vector<event> history_;
  std::map<std::string, std::vector<std::string>> patches_; ///< "name/subresource" -> patches
  std::map<std::string, int> calls_;
  uint64_t delivered_ = 0;
  uint64_t rv_ = 100;
  uint64_t uid_ = 0;
  uint64_t expired_before_ = 0; ///< a watch from a resourceVersion below this is gone
  uint64_t expiries_ = 0;       ///< counts expire_watches(): a running watch ends at a new one
  bool cancelled_ = false;
};

} // namespace berth::test
