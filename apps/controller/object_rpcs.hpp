#pragma once

// What DeleteVolume and DeleteSnapshot share, and CreateVolume's and CreateSnapshot's wait
// for the node's answer: templates over a store (volume_store, snapshot_store) and its
// object (kube::volume_object, kube::snapshot_object), whose spec names the node and the
// CSI name and whose status carries phase, reason, message and deleteRequest.

#include <string>

#include <grpcpp/grpcpp.h>
#include <spdlog/spdlog.h>

#include "apps/controller/rpc_support.hpp"
#include "apps/controller/volume_store.hpp"
#include "core/errors.hpp"
#include "core/text.hpp"
#include "protocols/csi/status.hpp"
#include "protocols/kube/berth_objects.hpp"

namespace berth::controller {

/// The failure the node reported in `obj`'s status.
template <class Object>
grpc::Status node_failure_of(const Object& obj) {
  return node_failure(obj.spec.node, obj.status.reason, obj.status.message);
}

/// A wait on `obj` that failed: DEADLINE_EXCEEDED naming the node when it ran out.
template <class Object>
grpc::Status wait_failed(const caf::error& err, const Object& obj, const std::string& what) {
  if (is(err, ec::timeout)) {
    return node_late(obj.spec.node, what + " " + quote_input(obj.spec.csi_name));
  }
  return csi::to_status(err);
}

/// Deletes the object of the CSI name `csi_name` and waits until its node removed the
/// storage and released it (OK; none to delete is OK too), or reported a failure of this
/// very deletion (its error). When the object's Node no longer exists (`nodes` says), no
/// berthd will ever remove that storage: the finalizer is released here, with a NodeGone
/// Event. `noun` is "volume" or "snapshot", `rpc` the RPC's name for logs.
template <class Store>
grpc::Status delete_and_wait(Store& store, volume_store& nodes, const std::string& csi_name,
                             const std::string& noun, const char* rpc,
                             clock_type::time_point until) {
  using Object = typename decltype(store.find(csi_name, until))::value_type::value_type;
  auto found = store.find(csi_name, until);
  if (!found) {
    return csi::to_status(found.error());
  }
  if (!*found) {
    return grpc::Status::OK; // gone already, or never made
  }
  const Object& obj = **found;
  auto node_exists = nodes.node_exists(obj.spec.node, until);
  if (!node_exists) {
    return csi::to_status(node_exists.error());
  }
  auto request = new_request_token();
  if (auto err = store.remove(obj.name, request, until)) {
    return csi::to_status(err);
  }
  if (!*node_exists) {
    auto message = "node " + quote_input(obj.spec.node) + " no longer exists: the storage of "
                   + noun + " " + quote_input(obj.spec.csi_name)
                   + " went with it, and berth forgets the " + noun;
    spdlog::warn("{}: {}", rpc, message);
    store.record_event(obj, "Warning", "NodeGone", message, until);
    if (auto err = store.drop_finalizer(obj, until)) {
      return csi::to_status(err);
    }
  }
  auto gone = store.wait(
    obj.name,
    [&](const Object& o) {
      // Only the failure that answers this call: an older one, of an attempt before, says
      // nothing of this one.
      return o.deleting && o.status.phase == kube::phase_deleting && !o.status.reason.empty()
             && o.status.delete_request == request;
    },
    until);
  if (!gone) {
    return wait_failed(gone.error(), obj, "removed " + noun);
  }
  if (*gone) {
    return node_failure_of(**gone);
  }
  return grpc::Status::OK;
}

/// Waits until the node answered the create of `obj` (`answered`): OK with the object in
/// `out`, or the node's failure, after which the object is deleted so that a retry starts
/// afresh. `noun` is "volume" or "snapshot", `rpc` the RPC's name for logs.
template <class Store, class Object, class Answered>
grpc::Status wait_created(Store& store, const Object& obj, Answered answered,
                          const std::string& noun, const char* rpc,
                          clock_type::time_point until, Object& out) {
  auto done = store.wait(obj.name, answered, until);
  if (!done) {
    return wait_failed(done.error(), obj, "made " + noun);
  }
  if (!*done) {
    return {grpc::StatusCode::ABORTED, noun + " " + quote_input(obj.spec.csi_name)
                                         + " was deleted while it was made; retry"};
  }
  if ((*done)->status.phase != kube::phase_ready) {
    auto failed = node_failure_of(**done);
    // The retry starts afresh: the node removes what it made, and the object goes.
    if (auto err = store.remove(obj.name, new_request_token(), until)) {
      spdlog::warn("{} {}: cannot delete the failed object {}: {}", rpc,
                   quote_input(obj.spec.csi_name), obj.name, describe(err));
    }
    return failed;
  }
  out = std::move(**done);
  return grpc::Status::OK;
}

} // namespace berth::controller
