#pragma once

// The controller's BerthVolumes, Nodes and Events, through the Kubernetes API
// (protocols/kube/object_api.hpp): find, create, change and delete a volume's object, wait
// until its node has answered in the status, and read what capacity the nodes report.
// Every call is bounded by the RPC's deadline, `until`. Safe to use from many threads.

#include <chrono>
#include <functional>
#include <map>
#include <optional>
#include <string>

#include <caf/expected.hpp>

#include "apps/controller/object_calls.hpp"
#include "apps/controller/placement.hpp"
#include "protocols/kube/berth_objects.hpp"
#include "protocols/kube/node_readiness.hpp"
#include "protocols/kube/object_api.hpp"

namespace berth::controller {

class volume_store {
public:
  explicit volume_store(kube::object_api& api);

  /// The object of the CSI volume `csi_name`; nullopt when there is none, or when the
  /// object of that name belongs to another CSI name.
  caf::expected<std::optional<kube::volume_object>> find(const std::string& csi_name,
                                                         clock_type::time_point until);

  /// Creates the object of `spec`; one that exists already is returned as it is.
  caf::expected<kube::volume_object> create(const kube::volume_object_spec& spec,
                                            clock_type::time_point until);

  /// Sets spec.sizeBytes and spec.mutableParameters of `obj`, reading it again and
  /// retrying while another writer changed it in between; `change` computes the new values
  /// from the object as it is. Returns the object as written.
  using spec_change = std::function<void(const kube::volume_object& now, uint64_t& size,
                                         std::map<std::string, std::string>& mutable_params)>;
  caf::expected<kube::volume_object> change_spec(const std::string& object_name,
                                                 const spec_change& change,
                                                 clock_type::time_point until);

  /// Deletes the object (the server marks it, and its finalizer holds it until the node
  /// removed the storage), after writing `request` in its delete_request_annotation: the
  /// node's failure carries it back, and for an object being deleted already it is the
  /// change that makes the node try again. Gone already is success.
  caf::error remove(const std::string& object_name, const std::string& request,
                    clock_type::time_point until);

  /// Removes berth's storage finalizer from `obj` (the node is gone for good), unless its
  /// name holds another object now.
  caf::error drop_finalizer(const kube::volume_object& obj, clock_type::time_point until);

  /// Waits until `done` holds for the object, or it is gone (nullopt), or `until` passes
  /// (ec::timeout). A watch the API refuses (ec::failed_precondition for 401/403,
  /// ec::invalid_argument for another 4xx) is that error at once.
  caf::expected<std::optional<kube::volume_object>>
  wait(const std::string& object_name, const std::function<bool(const kube::volume_object&)>& done,
       clock_type::time_point until);

  /// One page of every BerthVolume.
  caf::expected<kube::object_page> list(size_t limit, const std::string& next,
                                        clock_type::time_point until);

  /// The capacity every Node reports (nodes that report none are left out).
  caf::expected<capacity_map> capacities(clock_type::time_point until);

  /// Whether the Node `node` exists.
  caf::expected<bool> node_exists(const std::string& node, clock_type::time_point until);

  /// Every Node's Ready condition, by name.
  caf::expected<std::map<std::string, kube::node_readiness>> readiness(
    clock_type::time_point until);

  /// The Ready condition of the Node `node`; nullopt when the Node does not exist.
  caf::expected<std::optional<kube::node_readiness>> readiness_of(const std::string& node,
                                                                  clock_type::time_point until);

  /// Records an Event about `obj` (best effort: a failure is logged, not returned).
  void record_event(const kube::volume_object& obj, const std::string& type,
                    const std::string& reason, const std::string& message,
                    clock_type::time_point until);

private:
  /// Calls `each` with the JSON of every Node, a page of 500 at a time.
  caf::error for_each_node(clock_type::time_point until,
                           const std::function<void(const std::string& json)>& each);

  kube::object_api& api_;
};

} // namespace berth::controller
