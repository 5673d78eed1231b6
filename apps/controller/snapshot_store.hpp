#pragma once

// The controller's BerthSnapshots, through the Kubernetes API: find, create and delete a
// snapshot's object, and wait until its node has answered in the status. Every call is
// bounded by the RPC's deadline, `until`. Safe to use from many threads.

#include <functional>
#include <optional>
#include <string>

#include <caf/expected.hpp>

#include "apps/controller/object_calls.hpp"
#include "protocols/kube/object_api.hpp"
#include "protocols/kube/snapshot_objects.hpp"

namespace berth::controller {

class snapshot_store {
public:
  explicit snapshot_store(kube::object_api& api);

  /// The object of the CSI snapshot `csi_name`; nullopt when there is none, or when the
  /// object of that name belongs to another CSI name.
  caf::expected<std::optional<kube::snapshot_object>> find(const std::string& csi_name,
                                                           clock_type::time_point until);

  /// Creates the object of `spec`; one that exists already is returned as it is.
  caf::expected<kube::snapshot_object> create(const kube::snapshot_object_spec& spec,
                                              clock_type::time_point until);

  /// As volume_store::remove.
  caf::error remove(const std::string& object_name, const std::string& request,
                    clock_type::time_point until);

  /// Removes berth's storage finalizer from `obj` (its node is gone for good).
  caf::error drop_finalizer(const kube::snapshot_object& obj, clock_type::time_point until);

  /// As volume_store::wait.
  caf::expected<std::optional<kube::snapshot_object>>
  wait(const std::string& object_name,
       const std::function<bool(const kube::snapshot_object&)>& done, clock_type::time_point until);

  /// One page of every BerthSnapshot.
  caf::expected<kube::object_page> list(size_t limit, const std::string& next,
                                        clock_type::time_point until);

  /// Records an Event about `obj` (best effort).
  void record_event(const kube::snapshot_object& obj, const std::string& type,
                    const std::string& reason, const std::string& message,
                    clock_type::time_point until);

private:
  kube::object_api& api_;
};

} // namespace berth::controller
