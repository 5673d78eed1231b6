#pragma once

// An in-process kube_api for the hook's tests: a Node, a store of VolumeAttachments
// with a resourceVersion, watches that deliver the store's changes, and switches that
// close a watch, expire it (410 Gone) or fail every call. Counts every call.

#include <chrono>
#include <condition_variable>
#include <deque>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "core/errors.hpp"
#include "protocols/kube/kube_api.hpp"

namespace berth::test {

class fake_kube : public kube::kube_api {
public:
  using time_point = std::chrono::steady_clock::time_point;

  // -- what the test sets up and changes ------------------------------------

  void set_node(kube::node_info n) {
    std::lock_guard<std::mutex> guard{mtx_};
    node_ = std::move(n);
  }

  /// Every call fails with `err` (none when `err` is empty).
  void fail_all(caf::error err) {
    std::lock_guard<std::mutex> guard{mtx_};
    fail_ = std::move(err);
  }

  /// Only LIST and WATCH fail with `err`.
  void fail_attachments(caf::error err) {
    std::lock_guard<std::mutex> guard{mtx_};
    fail_attachments_ = std::move(err);
  }

  /// Creates an attachment (an ADDED event for the watch).
  void add(kube::attachment a) {
    std::lock_guard<std::mutex> guard{mtx_};
    objects_[a.name] = a;
    push("ADDED", std::move(a));
  }

  /// Deletes an attachment (a DELETED event for the watch).
  void remove(const std::string& name) {
    std::lock_guard<std::mutex> guard{mtx_};
    auto it = objects_.find(name);
    if (it == objects_.end()) {
      return;
    }
    auto a = it->second;
    objects_.erase(it);
    push("DELETED", std::move(a));
  }

  /// Deletes an attachment without telling the watch (an event the watch missed:
  /// only a LIST sees it).
  void remove_silently(const std::string& name) {
    std::lock_guard<std::mutex> guard{mtx_};
    objects_.erase(name);
    ++rv_;
  }

  /// A BOOKMARK event: a newer resourceVersion, no object.
  void bookmark() {
    std::lock_guard<std::mutex> guard{mtx_};
    push("BOOKMARK", {});
  }

  /// The current watch ends as the server closing it (watch_end::closed).
  void close_watch() {
    std::lock_guard<std::mutex> guard{mtx_};
    close_ = true;
    cv_.notify_all();
  }

  /// The current watch, and any watch from an older resourceVersion than now, ends 410 Gone.
  void expire_watch() {
    std::lock_guard<std::mutex> guard{mtx_};
    gone_ = true;
    cv_.notify_all();
  }

  /// Ends every call at once (test teardown).
  void shutdown() {
    std::lock_guard<std::mutex> guard{mtx_};
    shutdown_ = true;
    cv_.notify_all();
  }

  // -- what the test reads ----------------------------------------------------

  int gets() { return locked(gets_); }
  int lists() { return locked(lists_); }
  int watches() { return locked(watches_); }
  std::vector<std::string> watch_versions() {
    std::lock_guard<std::mutex> guard{mtx_};
    return watch_rvs_;
  }
  std::string resource_version() {
    std::lock_guard<std::mutex> guard{mtx_};
    return std::to_string(rv_);
  }

  /// Waits until `pred` holds on the counters (or 5 s).
  template <class Pred>
  bool wait_for(Pred pred) {
    std::unique_lock<std::mutex> lock{mtx_};
    return cv_.wait_for(lock, std::chrono::seconds{5}, [&] { return pred(*this); });
  }
  int watches_unlocked() const { return watches_; }
  /// Watch events the hook has handled (its on_event returned).
  int delivered_unlocked() const { return delivered_; }
  int lists_unlocked() const { return lists_; }

  // -- kube_api ----------------------------------------------------------------

  caf::expected<kube::node_info> get_node(const std::string& name, time_point) override {
    std::lock_guard<std::mutex> guard{mtx_};
    ++gets_;
    cv_.notify_all();
    if (fail_) {
      return fail_;
    }
    if (shutdown_) {
      return make_error(ec::unavailable, "fake: shut down");
    }
    (void) name;
    return node_;
  }

  caf::expected<kube::attachment_page> list_attachments(const std::string& next, size_t limit,
                                                        time_point) override {
    std::lock_guard<std::mutex> guard{mtx_};
    ++lists_;
    cv_.notify_all();
    if (auto err = failure()) {
      return err;
    }
    size_t from = next.empty() ? 0 : std::stoul(next);
    kube::attachment_page page;
    size_t i = 0;
    for (const auto& [name, a] : objects_) {
      if (i >= from && i < from + limit) {
        page.items.push_back(a);
      }
      ++i;
    }
    if (from + limit < objects_.size()) {
      page.next = std::to_string(from + limit);
    }
    page.resource_version = std::to_string(rv_);
    pending_.clear(); // a watch from this version starts after these changes
    gone_ = false;
    return page;
  }

  caf::expected<kube::watch_end>
  watch_attachments(const std::string& resource_version,
                    const std::function<bool(const kube::attachment_event&)>& on_event,
                    time_point until) override {
    std::unique_lock<std::mutex> lock{mtx_};
    ++watches_;
    watch_rvs_.push_back(resource_version);
    cv_.notify_all();
    if (auto err = failure()) {
      return err;
    }
    close_ = false;
    for (;;) {
      cv_.wait_until(lock, until,
                     [&] { return !pending_.empty() || close_ || gone_ || shutdown_; });
      if (shutdown_ || std::chrono::steady_clock::now() >= until) {
        return kube::watch_end::stopped;
      }
      if (gone_) {
        return kube::watch_end::gone;
      }
      if (!pending_.empty()) {
        auto ev = pending_.front();
        pending_.pop_front();
        lock.unlock();
        bool more = on_event(ev);
        lock.lock();
        ++delivered_;
        cv_.notify_all();
        if (!more) {
          return kube::watch_end::stopped;
        }
        continue;
      }
      close_ = false;
      return kube::watch_end::closed;
    }
  }

private:
  void push(const char* type, kube::attachment a) {
    ++rv_;
    pending_.push_back({type, std::move(a), std::to_string(rv_)});
    cv_.notify_all();
  }

  caf::error failure() {
    if (fail_) {
      return fail_;
    }
    if (fail_attachments_) {
      return fail_attachments_;
    }
    if (shutdown_) {
      return make_error(ec::unavailable, "fake: shut down");
    }
    return {};
  }

  int locked(const int& n) {
    std::lock_guard<std::mutex> guard{mtx_};
    return n;
  }

  std::mutex mtx_;
  std::condition_variable cv_;
  kube::node_info node_;
  caf::error fail_;
  caf::error fail_attachments_;
  std::map<std::string, kube::attachment> objects_;
  uint64_t rv_ = 100;
  std::deque<kube::attachment_event> pending_;
  bool close_ = false;
  bool gone_ = false;
  bool shutdown_ = false;
  int gets_ = 0;
  int lists_ = 0;
  int watches_ = 0;
  int delivered_ = 0;
  std::vector<std::string> watch_rvs_;
};

} // namespace berth::test
