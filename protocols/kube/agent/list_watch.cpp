#include "protocols/kube/agent/list_watch.hpp"

#include <spdlog/spdlog.h>

#include "core/errors.hpp"
#include "core/retry.hpp"
#include "protocols/kube/agent/agent_bounds.hpp"

namespace berth::kube::agent {

using detail::call_bound;
using detail::clock_type;
using detail::watch_bound;

void list_and_watch(object_api& api, const resource_ref& kind, const list_query& selector,
                    const std::string& what, const watch_handlers& h) {
  drain::backoff pause;
  drain::failure_log failures;
  while (!h.stopping()) {
    // LIST, every page, then WATCH from the list's resourceVersion.
    std::vector<std::string> names;
    std::string rv;
    auto q = selector;
    q.limit = 500;
    bool listed = true;
    do {
      auto page = api.list_objects(kind, q, clock_type::now() + call_bound);
      if (!page) {
        if (!h.stopping()) {
          failures.failed("listing " + what, page.error());
        }
        listed = false;
        break;
      }
      for (const auto& item : page->items) {
        if (auto name = h.seen(item); !name.empty()) {
          names.push_back(std::move(name));
        }
      }
      rv = page->resource_version;
      q.next = page->next;
    } while (!q.next.empty());
    if (!listed) {
      h.sleep(pause.next());
      continue;
    }
    failures.succeeded("listing " + what);
    pause.reset();
    h.listed(names);
    // WATCH until it is gone (410: list again) or stopped.
    for (;;) {
      if (h.stopping()) {
        return;
      }
      auto end = api.watch_objects(
        kind, selector, rv,
        [&](const object_event& ev) {
          rv = ev.resource_version.empty() ? rv : ev.resource_version;
          if (ev.type == "DELETED") {
            h.deleted(ev.object);
          } else if (ev.type != "BOOKMARK") {
            h.seen(ev.object);
          }
          return true;
        },
        clock_type::now() + watch_bound);
      if (end && *end == watch_end::gone) {
        break; // list again
      }
      if (!end) {
        if (h.stopping()) {
          return;
        }
        failures.failed("watching " + what, end.error());
        h.sleep(pause.next());
        if (is(end.error(), ec::invalid_argument)) {
          break; // a resourceVersion the server no longer takes: list again
        }
        continue;
      }
      failures.succeeded("watching " + what);
      pause.reset();
    }
  }
}

} // namespace berth::kube::agent
