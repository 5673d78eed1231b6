// kube_client's object verbs (object_api.hpp), on the transport every call shares.

#include "protocols/kube/kube_client.hpp"

#include "core/errors.hpp"
#include "protocols/kube/detail/text.hpp"
#include "protocols/kube/detail/transport.hpp"
#include "protocols/kube/kube_json.hpp"

namespace berth::kube {

using clock_type = std::chrono::steady_clock;

std::string resource_ref::collection() const {
  if (ns.empty()) {
    return prefix + "/" + plural;
  }
  return prefix + "/namespaces/" + detail::url_encode(ns) + "/" + plural;
}

namespace {

std::string object_path(const resource_ref& kind, const std::string& name) {
  return kind.collection() + "/" + detail::url_encode(name);
}

/// The query string of `q` (without "?"), parameters joined by "&".
std::string query_of(const list_query& q) {
  std::string out;
  auto add = [&out](const char* key, const std::string& value) {
    if (value.empty()) {
      return;
    }
    out += (out.empty() ? "" : "&") + std::string{key} + "=" + detail::url_encode(value);
  };
  add("labelSelector", q.label_selector);
  add("fieldSelector", q.field_selector);
  add("limit", q.limit == 0 ? std::string{} : std::to_string(q.limit));
  add("continue", q.next);
  return out;
}

} // namespace

caf::expected<std::string> kube_client::get_object(const resource_ref& kind,
                                                   const std::string& name,
                                                   clock_type::time_point until) {
  auto res = call({"GET", object_path(kind, name), "", ""}, until);
  if (!res) {
    return res.error();
  }
  return std::move(res->body);
}

caf::expected<object_page> kube_client::list_objects(const resource_ref& kind,
                                                     const list_query& q,
                                                     clock_type::time_point until) {
  auto query = query_of(q);
  auto res = call({"GET", kind.collection() + (query.empty() ? "" : "?" + query), "", ""}, until);
  if (!res) {
    return res.error();
  }
  return parse_object_list(res->body);
}

caf::expected<std::string> kube_client::create_object(const resource_ref& kind,
                                                      const std::string& json,
                                                      clock_type::time_point until) {
  auto res = call({"POST", kind.collection(), json, "application/json"}, until);
  if (!res) {
    return res.error();
  }
  return std::move(res->body);
}

caf::expected<std::string> kube_client::merge_patch(const resource_ref& kind,
                                                    const std::string& name,
                                                    const std::string& subresource,
                                                    const std::string& patch,
                                                    clock_type::time_point until) {
  auto path = object_path(kind, name) + (subresource.empty() ? "" : "/" + subresource);
  auto res = call({"PATCH", path, patch, "application/merge-patch+json"}, until);
  if (!res) {
    return res.error();
  }
  return std::move(res->body);
}

caf::expected<std::string> kube_client::delete_object(const resource_ref& kind,
                                                      const std::string& name,
                                                      clock_type::time_point until) {
  auto res = call({"DELETE", object_path(kind, name), "", ""}, until);
  if (!res) {
    return res.error();
  }
  return std::move(res->body);
}

caf::expected<watch_end>
kube_client::watch_objects(const resource_ref& kind, const list_query& q,
                           const std::string& resource_version,
                           const std::function<bool(const object_event&)>& on_event,
                           clock_type::time_point until) {
  auto selectors = q;
  selectors.limit = 0;
  selectors.next.clear();
  auto query = query_of(selectors);
  auto target = kind.collection() + "?watch=1" + (query.empty() ? "" : "&" + query);
  return watch_lines(
    target, resource_version, "WATCH " + kind.plural, until,
    [&](const std::string& line, const std::string& what,
        const std::string& token) -> std::optional<caf::expected<watch_end>> {
      auto ev = parse_object_watch_line(line);
      if (!ev) {
        return caf::expected<watch_end>{ev.error()};
      }
      return after_event(ev->event.type, ev->status, what, token, [&] { return on_event(ev->event); });
    });
}

} // namespace berth::kube
