#include "apps/controller/object_calls.hpp"

#include <thread>

#include <spdlog/spdlog.h>

#include "core/errors.hpp"
#include "core/text.hpp"
#include "protocols/kube/berth_objects.hpp"

namespace berth::controller {

namespace {

/// How long to wait before watching again after a watch failed for a passing reason.
constexpr std::chrono::milliseconds rewatch_pause{200};

} // namespace

caf::expected<std::optional<std::string>> wait_for_object(kube::object_api& api,
                                                          const kube::resource_ref& kind,
                                                          const std::string& name,
                                                          const json_check& done,
                                                          clock_type::time_point until) {
  using result = std::optional<std::string>;
  kube::list_query only_it;
  only_it.field_selector = "metadata.name=" + name;
  for (;;) {
    auto json = api.get_object(kind, name, until);
    if (!json) {
      if (is(json.error(), ec::not_found)) {
        return result{};
      }
      return json.error();
    }
    auto now = done(*json);
    if (!now) {
      return now.error();
    }
    if (*now) {
      return result{std::move(*json)};
    }
    bool gone = false;
    result found;
    caf::error bad;
    auto end = api.watch_objects(
      kind, only_it, kube::resource_version_of(*json),
      [&](const kube::object_event& ev) {
        if (ev.type == "BOOKMARK") {
          return true;
        }
        if (ev.type == "DELETED") {
          gone = true;
          return false;
        }
        auto it = done(ev.object);
        if (!it) {
          bad = it.error();
          return false;
        }
        if (*it) {
          found = ev.object;
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
      spdlog::debug("watch of {} {} ended: {}; watching again", kind.plural, name,
                    describe(end.error()));
      std::this_thread::sleep_for(rewatch_pause);
    }
    // closed, or gone (410): read the object again and watch from there.
  }
}

caf::expected<std::string> create_or_get(kube::object_api& api, const kube::resource_ref& kind,
                                         const std::string& name, const std::string& json,
                                         clock_type::time_point until) {
  auto made = api.create_object(kind, json, until);
  if (!made && is(made.error(), ec::already_exists)) {
    return api.get_object(kind, name, until);
  }
  return made;
}

caf::error request_deletion(kube::object_api& api, const kube::resource_ref& kind,
                            const std::string& name, const std::string& request,
                            clock_type::time_point until) {
  auto asked = api.merge_patch(kind, name, "", kube::delete_request_patch(request), until);
  if (!asked) {
    return is(asked.error(), ec::not_found) ? caf::none : asked.error();
  }
  auto res = api.delete_object(kind, name, until);
  if (!res && !is(res.error(), ec::not_found)) {
    return res.error();
  }
  return caf::none;
}

void record_object_event(kube::object_api& api, const std::string& kind_name,
                         const kube::object_meta& obj, const std::string& type,
                         const std::string& reason, const std::string& message,
                         clock_type::time_point until) {
  auto now = std::chrono::system_clock::now();
  auto stamp = std::chrono::duration_cast<std::chrono::milliseconds>(now.time_since_epoch()).count();
  auto name = obj.name.substr(0, 200) + "." + std::to_string(stamp);
  auto res = api.create_object(kube::events(kube::cluster_events_namespace),
                               kube::event_json(name, kind_name, obj, type, reason, message,
                                                "berth-controller", rfc3339(now)),
                               until);
  if (!res) {
    spdlog::warn("cannot record the Event {} about {} {}: {}", reason, kind_name, obj.name,
                 describe(res.error()));
  }
}

} // namespace berth::controller
