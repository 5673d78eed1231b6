#pragma once

// The controller's calls that are the same for each of berth's objects (BerthVolume,
// BerthSnapshot): wait until the node answers in the object, ask for its deletion, and
// record an Event about it. Each bounded by the RPC's deadline, `until`.

#include <chrono>
#include <functional>
#include <optional>
#include <string>

#include <caf/expected.hpp>

#include "core/errors.hpp"
#include "protocols/kube/berth_objects.hpp"
#include "protocols/kube/object_api.hpp"
#include "protocols/kube/object_meta.hpp"

namespace berth::controller {

using clock_type = std::chrono::steady_clock;

/// Whether the object (as JSON) is what the caller waits for; an error ends the wait.
using json_check = std::function<caf::expected<bool>(const std::string& json)>;

/// Waits until `done` holds for the object `name` of `kind` (its JSON), or it is gone
/// (nullopt), or `until` passes (ec::timeout). A watch the API refuses
/// (ec::failed_precondition for 401/403, ec::invalid_argument for another 4xx) is that
/// error at once.
caf::expected<std::optional<std::string>> wait_for_object(kube::object_api& api,
                                                          const kube::resource_ref& kind,
                                                          const std::string& name,
                                                          const json_check& done,
                                                          clock_type::time_point until);

/// wait_for_object with the object parsed by `parse` (kube::parse_volume_object, ...).
template <class Object, class Parse>
caf::expected<std::optional<Object>> wait_for_parsed(kube::object_api& api,
                                                     const kube::resource_ref& kind,
                                                     const std::string& name, Parse parse,
                                                     const std::function<bool(const Object&)>& done,
                                                     clock_type::time_point until) {
  auto json = wait_for_object(
    api, kind, name,
    [&](const std::string& text) -> caf::expected<bool> {
      auto obj = parse(text);
      if (!obj) {
        return obj.error();
      }
      return done(*obj);
    },
    until);
  if (!json) {
    return json.error();
  }
  if (!*json) {
    return std::optional<Object>{};
  }
  auto obj = parse(**json);
  if (!obj) {
    return obj.error();
  }
  return std::optional<Object>{std::move(*obj)};
}

/// The object of the CSI name `csi_name` (under kube::object_name_for(csi_name)), parsed
/// by `parse`; nullopt when there is none, or when that object belongs to another CSI name.
template <class Object, class Parse>
caf::expected<std::optional<Object>> find_by_csi_name(kube::object_api& api,
                                                      const kube::resource_ref& kind,
                                                      const std::string& csi_name, Parse parse,
                                                      clock_type::time_point until) {
  auto json = api.get_object(kind, kube::object_name_for(csi_name), until);
  if (!json) {
    if (is(json.error(), ec::not_found)) {
      return std::optional<Object>{};
    }
    return json.error();
  }
  auto obj = parse(*json);
  if (!obj) {
    return obj.error();
  }
  if (obj->spec.csi_name != csi_name) {
    return std::optional<Object>{};
  }
  return std::optional<Object>{std::move(*obj)};
}

/// Creates the object `json` named `name`; one that exists already is read and returned
/// as it is (a retry finds what the first attempt made).
caf::expected<std::string> create_or_get(kube::object_api& api, const kube::resource_ref& kind,
                                         const std::string& name, const std::string& json,
                                         clock_type::time_point until);

/// Deletes the object (the server marks it, and its finalizer holds it until the node
/// removed the storage), after writing `request` in its delete_request_annotation: the
/// node's failure carries it back, and for an object being deleted already it is the
/// change that makes the node try again. Gone already is success.
caf::error request_deletion(kube::object_api& api, const kube::resource_ref& kind,
                            const std::string& name, const std::string& request,
                            clock_type::time_point until);

/// Records an Event about `obj`, of `kind_name`, in kube::cluster_events_namespace (best
/// effort: a failure is logged).
void record_object_event(kube::object_api& api, const std::string& kind_name,
                         const kube::object_meta& obj, const std::string& type,
                         const std::string& reason, const std::string& message,
                         clock_type::time_point until);

} // namespace berth::controller
