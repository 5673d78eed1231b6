#include "protocols/kube/storage_finalizer.hpp"

#include <algorithm>
#include <iterator>
#include <vector>

#include "core/errors.hpp"
#include "protocols/kube/berth_objects.hpp"
#include "protocols/kube/detail/object_json.hpp"

namespace berth::kube {

namespace {

/// A write that lost a race with another writer is read again and retried this often.
constexpr int max_conflict_retries = 8;

} // namespace

caf::error release_storage_finalizer(object_api& api, const resource_ref& kind,
                                     const std::string& name,
                                     const std::string& uid,
                                     std::chrono::steady_clock::time_point until) {
  for (int attempt = 0;; ++attempt) {
    auto json = api.get_object(kind, name, until);
    if (!json) {
      return is(json.error(), ec::not_found) ? caf::none : json.error();
    }
    auto now = detail::parse_meta(*json, "object " + name);
    if (!now) {
      return now.error();
    }
    if (now->uid != uid) {
      return caf::none;
    }
    std::vector<std::string> kept;
    std::copy_if(now->finalizers.begin(), now->finalizers.end(), std::back_inserter(kept),
                 [](const std::string& f) { return f != storage_finalizer; });
    if (kept.size() == now->finalizers.size()) {
      return caf::none;
    }
    // Conditional on the resourceVersion just read: a write in between makes it a conflict,
    // and the object is read again (a new object under the name has another uid).
    auto res = api.merge_patch(kind, name, "",
                               finalizers_patch(now->resource_version, kept), until);
    if (res || is(res.error(), ec::not_found)) {
      return caf::none;
    }
    if (!is(res.error(), ec::aborted) || attempt + 1 >= max_conflict_retries) {
      return res.error();
    }
  }
}

} // namespace berth::kube
