#include "apps/controller/volume_store.hpp"

#include <spdlog/spdlog.h>

#include "core/errors.hpp"
#include "core/text.hpp"
#include "protocols/kube/storage_finalizer.hpp"

namespace berth::controller {

namespace {

/// How often a write that lost a race with another writer is tried again.
constexpr int max_conflict_retries = 8;

} // namespace

volume_store::volume_store(kube::object_api& api) : api_(api) {
}

caf::expected<std::optional<kube::volume_object>>
volume_store::find(const std::string& csi_name, clock_type::time_point until) {
  return find_by_csi_name<kube::volume_object>(api_, kube::berth_volumes(), csi_name,
                                               kube::parse_volume_object, until);
}

caf::expected<kube::volume_object> volume_store::create(const kube::volume_object_spec& spec,
                                                        clock_type::time_point until) {
  auto name = kube::object_name_for(spec.csi_name);
  auto json = create_or_get(api_, kube::berth_volumes(), name, kube::volume_object_json(name, spec),
                            until);
  if (!json) {
    return json.error();
  }
  return kube::parse_volume_object(*json);
}

caf::expected<kube::volume_object> volume_store::change_spec(const std::string& object_name,
                                                             const spec_change& change,
                                                             clock_type::time_point until) {
  for (int attempt = 0;; ++attempt) {
    auto json = api_.get_object(kube::berth_volumes(), object_name, until);
    if (!json) {
      return json.error();
    }
    auto now = kube::parse_volume_object(*json);
    if (!now) {
      return now.error();
    }
    auto size = now->spec.size_bytes;
    auto params = now->spec.mutable_parameters;
    change(*now, size, params);
    if (size == now->spec.size_bytes && params == now->spec.mutable_parameters) {
      return now; // nothing to write: the spec already asks for it
    }
    auto written = api_.merge_patch(kube::berth_volumes(), object_name, "",
                                    kube::spec_patch(now->resource_version, size, params,
                                                     now->spec.mutable_parameters), until);
    if (written) {
      return kube::parse_volume_object(*written);
    }
    // ec::aborted: another writer changed the object since it was read; read it again.
    if (!is(written.error(), ec::aborted) || attempt + 1 >= max_conflict_retries) {
      return written.error();
    }
  }
}

caf::error volume_store::remove(const std::string& object_name, const std::string& request,
                                clock_type::time_point until) {
  return request_deletion(api_, kube::berth_volumes(), object_name, request, until);
}

caf::error volume_store::drop_finalizer(const kube::volume_object& obj,
                                        clock_type::time_point until) {
  return kube::release_storage_finalizer(api_, kube::berth_volumes(), obj.name, obj.uid, until);
}

caf::expected<std::optional<kube::volume_object>>
volume_store::wait(const std::string& object_name,
                   const std::function<bool(const kube::volume_object&)>& done,
                   clock_type::time_point until) {
  return wait_for_parsed(api_, kube::berth_volumes(), object_name, kube::parse_volume_object, done,
                         until);
}

caf::expected<kube::object_page> volume_store::list(size_t limit, const std::string& next,
                                                    clock_type::time_point until) {
  kube::list_query q;
  q.limit = limit;
  q.next = next;
  return api_.list_objects(kube::berth_volumes(), q, until);
}

caf::error volume_store::for_each_node(clock_type::time_point until,
                                       const std::function<void(const std::string& json)>& each) {
  kube::list_query q;
  q.limit = 500;
  do {
    auto page = api_.list_objects(kube::nodes(), q, until);
    if (!page) {
      return page.error();
    }
    for (const auto& item : page->items) {
      each(item);
    }
    q.next = page->next;
  } while (!q.next.empty());
  return {};
}

caf::expected<capacity_map> volume_store::capacities(clock_type::time_point until) {
  capacity_map out;
  auto err = for_each_node(until, [&out](const std::string& item) {
    auto reported = kube::parse_node_capacity(item);
    auto name = kube::object_name_of(item);
    if (reported && !reported->empty() && !name.empty()) {
      out[name] = std::move(*reported);
    }
  });
  if (err) {
    return err;
  }
  return out;
}

caf::expected<std::map<std::string, kube::node_readiness>> volume_store::readiness(
  clock_type::time_point until) {
  std::map<std::string, kube::node_readiness> out;
  auto err = for_each_node(until, [&out](const std::string& item) {
    auto ready = kube::parse_node_readiness(item);
    auto name = kube::object_name_of(item);
    if (ready && !name.empty()) {
      out[name] = std::move(*ready);
    }
  });
  if (err) {
    return err;
  }
  return out;
}

caf::expected<std::optional<kube::node_readiness>> volume_store::readiness_of(
  const std::string& node, clock_type::time_point until) {
  auto json = api_.get_object(kube::nodes(), node, until);
  if (!json) {
    if (is(json.error(), ec::not_found)) {
      return std::nullopt;
    }
    return json.error();
  }
  auto ready = kube::parse_node_readiness(*json);
  if (!ready) {
    return ready.error();
  }
  return std::optional<kube::node_readiness>{std::move(*ready)};
}

caf::expected<bool> volume_store::node_exists(const std::string& node,
                                              clock_type::time_point until) {
  auto ready = readiness_of(node, until);
  if (!ready) {
    return ready.error();
  }
  return ready->has_value();
}

void volume_store::record_event(const kube::volume_object& obj, const std::string& type,
                                const std::string& reason, const std::string& message,
                                clock_type::time_point until) {
  record_object_event(api_, "BerthVolume", obj, type, reason, message, until);
}

} // namespace berth::controller
