#include "apps/controller/snapshot_store.hpp"

#include "core/errors.hpp"
#include "protocols/kube/berth_objects.hpp"
#include "protocols/kube/storage_finalizer.hpp"

namespace berth::controller {

snapshot_store::snapshot_store(kube::object_api& api) : api_(api) {
}

caf::expected<std::optional<kube::snapshot_object>>
snapshot_store::find(const std::string& csi_name, clock_type::time_point until) {
  return find_by_csi_name<kube::snapshot_object>(api_, kube::berth_snapshots(), csi_name,
                                                 kube::parse_snapshot_object, until);
}

caf::expected<kube::snapshot_object> snapshot_store::create(const kube::snapshot_object_spec& spec,
                                                            clock_type::time_point until) {
  auto name = kube::object_name_for(spec.csi_name);
  auto json = create_or_get(api_, kube::berth_snapshots(), name,
                            kube::snapshot_object_json(name, spec), until);
  if (!json) {
    return json.error();
  }
  return kube::parse_snapshot_object(*json);
}

caf::error snapshot_store::remove(const std::string& object_name, const std::string& request,
                                  clock_type::time_point until) {
  return request_deletion(api_, kube::berth_snapshots(), object_name, request, until);
}

caf::error snapshot_store::drop_finalizer(const kube::snapshot_object& obj,
                                          clock_type::time_point until) {
  return kube::release_storage_finalizer(api_, kube::berth_snapshots(), obj.name, obj.uid, until);
}

caf::expected<std::optional<kube::snapshot_object>>
snapshot_store::wait(const std::string& object_name,
                     const std::function<bool(const kube::snapshot_object&)>& done,
                     clock_type::time_point until) {
  return wait_for_parsed(api_, kube::berth_snapshots(), object_name, kube::parse_snapshot_object,
                         done, until);
}

caf::expected<kube::object_page> snapshot_store::list(size_t limit, const std::string& next,
                                                      clock_type::time_point until) {
  kube::list_query q;
  q.limit = limit;
  q.next = next;
  return api_.list_objects(kube::berth_snapshots(), q, until);
}

void snapshot_store::record_event(const kube::snapshot_object& obj, const std::string& type,
                                  const std::string& reason, const std::string& message,
                                  clock_type::time_point until) {
  record_object_event(api_, "BerthSnapshot", obj, type, reason, message, until);
}

} // namespace berth::controller
