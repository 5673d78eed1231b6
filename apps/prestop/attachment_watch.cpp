#include "apps/prestop/attachment_watch.hpp"

#include <map>
#include <utility>

#include <spdlog/spdlog.h>

#include "apps/prestop/drain_rules.hpp"
#include "core/errors.hpp"
#include "core/retry.hpp"

namespace berth::drain {

namespace {

using clock = std::chrono::steady_clock;
using attachment_map = std::map<std::string, kube::attachment>;

/// Sleeps `d`, cut short by stop and the deadline; false when the watcher must leave.
bool pause(detail::wait_state& st, std::chrono::milliseconds d, clock::time_point deadline) {
  std::unique_lock<std::mutex> lock{st.mtx};
  st.sleep_until(lock, std::min(clock::now() + d, deadline));
  return !st.stop && clock::now() < deadline;
}

bool over(detail::wait_state& st, clock::time_point deadline) {
  std::lock_guard<std::mutex> guard{st.mtx};
  return st.stop || clock::now() >= deadline;
}

void note_error(detail::wait_state& st, const caf::error& err) {
  std::lock_guard<std::mutex> guard{st.mtx};
  st.kube_error = berth::describe(err);
}

/// Every page of the LIST: the matching attachments and the resourceVersion to watch from.
caf::expected<std::pair<attachment_map, std::string>> list_all(kube::kube_api& api,
                                                               detail::wait_state& st,
                                                               const watch_target& t) {
  attachment_map found;
  std::string next;
  std::string rv;
  do {
    if (over(st, t.deadline)) {
      return make_error(ec::timeout, "the deadline came while listing VolumeAttachments");
    }
    auto page = api.list_attachments(next, t.page_limit, t.deadline);
    if (!page) {
      return page.error();
    }
    for (auto& a : page->items) {
      if (holds_node(a, t.node, t.driver)) {
        found[a.name] = std::move(a);
      }
    }
    rv = page->resource_version;
    next = page->next;
  } while (!next.empty());
  return std::make_pair(std::move(found), std::move(rv));
}

/// Installs a fresh LIST's result, logging what changed since the last one.
void install(detail::wait_state& st, attachment_map fresh) {
  std::lock_guard<std::mutex> guard{st.mtx};
  if (st.listed) {
    for (const auto& [name, a] : st.attachments) {
      if (fresh.count(name) == 0) {
        spdlog::info("prestop: VolumeAttachment {} is gone (seen on re-list); {} left",
                     describe(a), fresh.size());
      }
    }
  }
  st.attachments = std::move(fresh);
  st.listed = true;
  st.kube_error.clear();
  ++st.attachments_gen;
  st.cv.notify_all();
}

/// Applies one watch event; false when the watch should end.
bool apply(detail::wait_state& st, const watch_target& t, const kube::attachment_event& ev) {
  std::lock_guard<std::mutex> guard{st.mtx};
  if (st.stop) {
    return false;
  }
  if (ev.type != "ADDED" && ev.type != "MODIFIED" && ev.type != "DELETED") {
    if (ev.type != "BOOKMARK") {
      spdlog::debug("prestop: ignoring a VolumeAttachment watch event of type {}", ev.type);
    }
    return true;
  }
  const auto& a = ev.object;
  if (ev.type == "DELETED" || !holds_node(a, t.node, t.driver)) {
    if (st.attachments.erase(a.name) > 0) {
      spdlog::info("prestop: VolumeAttachment {} is gone; {} left", describe(a),
                   st.attachments.size());
      ++st.attachments_gen;
      st.cv.notify_all();
    }
    return true;
  }
  bool added = st.attachments.insert_or_assign(a.name, a).second;
  if (added) {
    spdlog::info("prestop: VolumeAttachment {} of {} appeared for node {}; {} now", describe(a),
                 t.driver, t.node, st.attachments.size());
  }
  ++st.attachments_gen;
  st.cv.notify_all();
  return true;
}

} // namespace

std::string describe(const kube::attachment& a) {
  return a.name + (a.volume.empty() ? " (inline volume)" : " (volume " + a.volume + ")");
}

void watch_attachments(const std::shared_ptr<kube::kube_api>& api,
                       const std::shared_ptr<detail::wait_state>& st, const watch_target& t) {
  failure_log flog;
  backoff delay;
  while (!over(*st, t.deadline)) {
    auto listed = list_all(*api, *st, t);
    if (!listed) {
      if (over(*st, t.deadline)) {
        return;
      }
      flog.failed("listing VolumeAttachments", listed.error());
      note_error(*st, listed.error());
      if (!pause(*st, delay.next(), t.deadline)) {
        return;
      }
      continue;
    }
    flog.succeeded("listing VolumeAttachments");
    install(*st, std::move(listed->first));
    std::string rv = std::move(listed->second);
    for (bool relist = false; !relist && !over(*st, t.deadline);) {
      auto started = clock::now();
      size_t events = 0;
      auto end = api->watch_attachments(
        rv,
        [&](const kube::attachment_event& ev) {
          ++events;
          if (!ev.resource_version.empty()) {
            rv = ev.resource_version;
          }
          return apply(*st, t, ev);
        },
        t.deadline);
      if (!end) {
        if (over(*st, t.deadline)) {
          return;
        }
        flog.failed("watching VolumeAttachments", end.error());
        note_error(*st, end.error());
        if (!pause(*st, delay.next(), t.deadline)) {
          return;
        }
        continue;
      }
      flog.succeeded("watching VolumeAttachments");
      if (*end == kube::watch_end::stopped) {
        continue; // stop or the deadline: the loop's test ends it
      }
      if (*end == kube::watch_end::gone) {
        spdlog::info("prestop: the VolumeAttachment watch from resourceVersion {} expired "
                     "(410 Gone); listing again",
                     rv);
        relist = true;
      } else {
        spdlog::debug("prestop: the server closed the VolumeAttachment watch; watching again "
                      "from resourceVersion {}",
                      rv);
      }
      if (events == 0 && clock::now() - started < t.min_watch) {
        if (!pause(*st, delay.next(), t.deadline)) {
          return;
        }
      } else {
        delay.reset();
      }
    }
  }
}

} // namespace berth::drain
