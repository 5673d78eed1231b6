#include "apps/controller/volume_store.hpp"

#include <thread>

#include <spdlog/spdlog.h>

#include "core/errors.hpp"
#include "core/text.hpp"
#include "protocols/kube/storage_finalizer.hpp"

namespace berth::controller {

namespace {

/// How often a write that lost a race with another writer is tried again.
constexpr int max_conflict_retries = 8;

/// How long to wait before watching again after a watch failed for a passing reason.
constexpr std::chrono::milliseconds rewatch_pause{200};

} // namespace

volume_store::volume_store(kube::object_api& api, std::string events_namespace)
  : api_(api), events_namespace_(std::move(events_namespace)) {
}

caf::expected<std::optional<kube::volume_object>>
volume_store::find(const std::string& csi_name, clock_type::time_point until) {
  auto json = api_.get_object(kube::berth_volumes(), kube::object_name_for(csi_name), until);
  if (!json) {
    if (is(json.error(), ec::not_found)) {
      return std::optional<kube::volume_object>{};
    }
    return json.error();
  }
  auto obj = kube::parse_volume_object(*json);
  if (!obj) {
    return obj.error();
  }
  if (obj->spec.csi_name != csi_name) {
    return std::optional<kube::volume_object>{};
  }
  return std::optional<kube::volume_object>{std::move(*obj)};
}

caf::expected<kube::volume_object> volume_store::create(const kube::volume_object_spec& spec,
                                                        clock_type::time_point until) {
  auto name = kube::object_name_for(spec.csi_name);
  auto json = api_.create_object(kube::berth_volumes(), kube::volume_object_json(name, spec), until);
  if (!json && is(json.error(), ec::already_exists)) {
    json = api_.get_object(kube::berth_volumes(), name, until);
  }
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
  auto asked = api_.merge_patch(kube::berth_volumes(), object_name, "",
                                kube::delete_request_patch(request), until);
  if (!asked) {
    return is(asked.error(), ec::not_found) ? caf::none : asked.error();
  }
  auto res = api_.delete_object(kube::berth_volumes(), object_name, until);
  if (!res && !is(res.error(), ec::not_found)) {
    return res.error();
  }
  return caf::none;
}

caf::error volume_store::drop_finalizer(const kube::volume_object& obj,
                                        clock_type::time_point until) {
  return kube::release_storage_finalizer(api_, obj.name, obj.uid, until);
}

caf::expected<std::optional<kube::volume_object>>
volume_store::wait(const std::string& object_name,
                   const std::function<bool(const kube::volume_object&)>& done,
                   clock_type::time_point until) {
  using result = std::optional<kube::volume_object>;
  kube::list_query only_it;
  only_it.field_selector = "metadata.name=" + object_name;
  for (;;) {
    auto json = api_.get_object(kube::berth_volumes(), object_name, until);
    if (!json) {
      if (is(json.error(), ec::not_found)) {
        return result{};
      }
      return json.error();
    }
    auto obj = kube::parse_volume_object(*json);
    if (!obj) {
      return obj.error();
    }
    if (done(*obj)) {
      return result{std::move(*obj)};
    }
    bool gone = false;
    result found;
    caf::error bad;
    auto end = api_.watch_objects(
      kube::berth_volumes(), only_it, obj->resource_version,
      [&](const kube::object_event& ev) {
        if (ev.type == "BOOKMARK") {
          return true;
        }
        if (ev.type == "DELETED") {
          gone = true;
          return false;
        }
        auto now = kube::parse_volume_object(ev.object);
        if (!now) {
          bad = now.error();
          return false;
        }
        if (done(*now)) {
          found = std::move(*now);
          return false;
        }
        return true;
      },
      until);
    if (gone) {
      return result{};
    }
    if (found) {
      return found;
    }
    if (bad) {
      return bad;
    }
    if (clock_type::now() >= until || (end && *end == kube::watch_end::stopped)) {
      return make_error(ec::timeout, "the deadline passed");
    }
    if (!end && (is(end.error(), ec::failed_precondition) || is(end.error(), ec::invalid_argument))) {
      return end.error(); // the API refused the watch (401/403, 400): waiting cannot help
    }
    if (!end) {
      // The watch failed (the server restarted, a connection dropped): read and watch again.
      spdlog::debug("watch of BerthVolume {} ended: {}; watching again", object_name,
                    describe(end.error()));
      std::this_thread::sleep_for(rewatch_pause);
    }
    // closed, or gone (410): read the object again and watch from there.
  }
}

caf::expected<kube::object_page> volume_store::list(size_t limit, const std::string& next,
                                                    clock_type::time_point until) {
  kube::list_query q;
  q.limit = limit;
  q.next = next;
  return api_.list_objects(kube::berth_volumes(), q, until);
}

caf::expected<capacity_map> volume_store::capacities(clock_type::time_point until) {
  capacity_map out;
  kube::list_query q;
  q.limit = 500;
  do {
    auto page = api_.list_objects(kube::nodes(), q, until);
    if (!page) {
      return page.error();
    }
    for (const auto& item : page->items) {
      auto reported = kube::parse_node_capacity(item);
      auto name = kube::object_name_of(item);
      if (reported && !reported->empty() && !name.empty()) {
        out[name] = std::move(*reported);
      }
    }
    q.next = page->next;
  } while (!q.next.empty());
  return out;
}

caf::expected<bool> volume_store::node_exists(const std::string& node,
                                              clock_type::time_point until) {
  auto json = api_.get_object(kube::nodes(), node, until);
  if (!json) {
    if (is(json.error(), ec::not_found)) {
      return false;
    }
    return json.error();
  }
  return true;
}

void volume_store::record_event(const kube::volume_object& obj, const std::string& type,
                                const std::string& reason, const std::string& message,
                                clock_type::time_point until) {
  auto now = std::chrono::system_clock::now();
  auto stamp = std::chrono::duration_cast<std::chrono::milliseconds>(now.time_since_epoch()).count();
  auto name = obj.name.substr(0, 200) + "." + std::to_string(stamp);
  auto res = api_.create_object(kube::events(events_namespace_),
                                kube::event_json(events_namespace_, name, obj, type, reason,
                                                 message, "berth-controller", rfc3339(now)),
                                until);
  if (!res) {
    spdlog::warn("cannot record the Event {} about BerthVolume {}: {}", reason, obj.name,
                 describe(res.error()));
  }
}

} // namespace berth::controller
