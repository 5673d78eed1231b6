#include <future>
#include <mutex>
#include <vector>

#include <gtest/gtest.h>

#include "tests/protocols/kube/kube_fixture.hpp"

using namespace berth;
using namespace berth::kube;
using namespace berth::test;
using namespace std::chrono_literals;

namespace {

/// Events a watch delivered, readable from the test thread.
struct recorder {
  std::mutex m;
  std::vector<attachment_event> events;
  std::function<bool(const attachment_event&)> stop_when = [](const attachment_event&) {
    return false;
  };

  std::function<bool(const attachment_event&)> sink() {
    return [this](const attachment_event& e) {
      std::lock_guard<std::mutex> lk{m};
      events.push_back(e);
      return !stop_when(e);
    };
  }
  std::vector<attachment_event> copy() {
    std::lock_guard<std::mutex> lk{m};
    return events;
  }
};

class kube_watch_test : public kube_fixture {
protected:
  /// Starts a watch on another thread.
  std::future<caf::expected<watch_end>> watch(const std::string& rv, recorder& rec,
                                              std::chrono::milliseconds deadline = 10s) {
    auto sink = rec.sink();
    auto until = in(deadline);
    return std::async(std::launch::async, [this, rv, sink, until] {
      return client->watch_attachments(rv, sink, until);
    });
  }
};

} // namespace

TEST_F(kube_watch_test, receives_events_and_a_bookmark) {
  api.add_attachment({"va-0", "n1", "berth.csi.dev", "pv-0"});
  auto list = client->list_attachments("", 100, in(5s));
  ASSERT_TRUE(list);
  recorder rec;
  rec.stop_when = [](const attachment_event& e) { return e.type == "BOOKMARK"; };
  auto done = watch(list->resource_version, rec);
  ASSERT_TRUE(api.wait_for_watches(1, 5s));
  api.add_attachment({"va-1", "n1", "berth.csi.dev", "pv-1"});
  api.add_attachment({"va-1", "n2", "berth.csi.dev", "pv-1"});
  auto deleted_rv = api.delete_attachment("va-0");
  api.send_bookmark();
  ASSERT_EQ(done.wait_for(5s), std::future_status::ready);
  auto end = done.get();
  ASSERT_TRUE(end) << describe(end.error());
  EXPECT_EQ(*end, watch_end::stopped);
  auto events = rec.copy();
  ASSERT_EQ(events.size(), 4u);
  EXPECT_EQ(events[0].type, "ADDED");
  EXPECT_EQ(events[0].object.name, "va-1");
  EXPECT_EQ(events[0].object.node, "n1");
  EXPECT_EQ(events[0].object.attacher, "berth.csi.dev");
  EXPECT_EQ(events[0].object.volume, "pv-1");
  EXPECT_EQ(events[1].type, "MODIFIED");
  EXPECT_EQ(events[1].object.node, "n2");
  EXPECT_EQ(events[2].type, "DELETED");
  EXPECT_EQ(events[2].object.name, "va-0");
  EXPECT_EQ(events[2].resource_version, deleted_rv);
  EXPECT_EQ(events[3].type, "BOOKMARK");
  EXPECT_EQ(events[3].resource_version, api.resource_version());
  EXPECT_LT(std::stoull(events[0].resource_version), std::stoull(events[1].resource_version));
}

TEST_F(kube_watch_test, watch_from_an_older_version_replays_what_followed) {
  auto rv = api.add_attachment({"va-0", "n1", "d", "pv-0"});
  api.add_attachment({"va-1", "n1", "d", "pv-1"});
  api.delete_attachment("va-0");
  recorder rec;
  rec.stop_when = [](const attachment_event& e) { return e.type == "DELETED"; };
  auto end = client->watch_attachments(rv, rec.sink(), in(5s));
  ASSERT_TRUE(end) << describe(end.error());
  EXPECT_EQ(*end, watch_end::stopped);
  auto events = rec.copy();
  ASSERT_EQ(events.size(), 2u);
  EXPECT_EQ(events[0].type, "ADDED");
  EXPECT_EQ(events[0].object.name, "va-1");
  EXPECT_EQ(events[1].type, "DELETED");
}

TEST_F(kube_watch_test, stream_closed_by_the_server_is_closed) {
  recorder rec;
  auto done = watch(api.resource_version(), rec);
  ASSERT_TRUE(api.wait_for_watches(1, 5s));
  api.add_attachment({"va-1", "n1", "d", "pv"});
  api.close_watches();
  ASSERT_EQ(done.wait_for(5s), std::future_status::ready);
  auto end = done.get();
  ASSERT_TRUE(end) << describe(end.error());
  EXPECT_EQ(*end, watch_end::closed);
  EXPECT_EQ(rec.copy().size(), 1u);
}

TEST_F(kube_watch_test, connection_dropped_mid_stream_is_closed) {
  recorder rec;
  auto done = watch(api.resource_version(), rec);
  ASSERT_TRUE(api.wait_for_watches(1, 5s));
  api.drop_watches();
  ASSERT_EQ(done.wait_for(5s), std::future_status::ready);
  auto end = done.get();
  ASSERT_TRUE(end) << describe(end.error());
  EXPECT_EQ(*end, watch_end::closed);
}

TEST_F(kube_watch_test, error_event_410_on_an_open_watch_is_gone) {
  recorder rec;
  auto done = watch(api.resource_version(), rec);
  ASSERT_TRUE(api.wait_for_watches(1, 5s));
  api.expire_resource_versions();
  ASSERT_EQ(done.wait_for(5s), std::future_status::ready);
  auto end = done.get();
  ASSERT_TRUE(end) << describe(end.error());
  EXPECT_EQ(*end, watch_end::gone);
  EXPECT_TRUE(rec.copy().empty()) << "the ERROR event is not passed on";
}

TEST_F(kube_watch_test, new_watch_from_an_expired_version_is_gone_both_ways) {
  auto old_rv = api.add_attachment({"va-1", "n1", "d", "pv"});
  for (auto style : {gone_style::error_event, gone_style::http_status}) {
    api.expire_resource_versions(style);
    recorder rec;
    auto end = client->watch_attachments(old_rv, rec.sink(), in(5s));
    ASSERT_TRUE(end) << describe(end.error());
    EXPECT_EQ(*end, watch_end::gone);
  }
  // A fresh list gives a version to watch from again.
  auto list = client->list_attachments("", 10, in(5s));
  ASSERT_TRUE(list);
  recorder rec;
  auto done = watch(list->resource_version, rec);
  ASSERT_TRUE(api.wait_for_watches(1, 5s));
  api.close_watches();
  auto end = done.get();
  ASSERT_TRUE(end);
  EXPECT_EQ(*end, watch_end::closed);
}

TEST_F(kube_watch_test, deadline_ends_a_quiet_watch_as_stopped) {
  recorder rec;
  auto start = std::chrono::steady_clock::now();
  auto end = client->watch_attachments(api.resource_version(), rec.sink(), in(500ms));
  auto took = std::chrono::steady_clock::now() - start;
  ASSERT_TRUE(end) << describe(end.error());
  EXPECT_EQ(*end, watch_end::stopped);
  EXPECT_GE(took, 450ms);
  EXPECT_LT(took, 2s);
}

TEST_F(kube_watch_test, watch_without_a_version_starts_with_what_exists) {
  api.add_attachment({"va-1", "n1", "d", "pv-1"});
  api.add_attachment({"va-2", "n1", "d", "pv-2"});
  recorder rec;
  rec.stop_when = [](const attachment_event& e) { return e.object.name == "va-2"; };
  auto end = client->watch_attachments("", rec.sink(), in(5s));
  ASSERT_TRUE(end) << describe(end.error());
  EXPECT_EQ(*end, watch_end::stopped);
  auto events = rec.copy();
  ASSERT_EQ(events.size(), 2u);
  EXPECT_EQ(events[0].type, "ADDED");
}

// A connection whose far end vanished sends nothing and never ends; the deadline alone
// would leave the caller blind until it passes.
TEST_F(kube_watch_test, a_half_open_watch_ends_as_a_timeout_long_before_the_deadline) {
  auto bounded = kube::kube_client::make(config, kube::watch_bounds{1s, 1s});
  ASSERT_TRUE(bounded) << describe(bounded.error());
  api.set_half_open_watches(true);
  recorder rec;
  auto sink = rec.sink();
  auto until = in(60s);
  auto done = std::async(std::launch::async, [&] {
    return (*bounded)->watch_attachments(api.resource_version(), sink, until);
  });
  ASSERT_TRUE(api.wait_for_watches(1, 5s));
  api.add_attachment({"va-1", "n1", "d", "pv"}); // never arrives
  ASSERT_EQ(done.wait_for(30s), std::future_status::ready) << "the silent watch was not ended";
  auto end = done.get();
  ASSERT_FALSE(end) << "a dead connection is an error, not an end the server chose";
  EXPECT_EQ(end.error(), ec::timeout) << describe(end.error());
  EXPECT_NE(describe(end.error()).find("presumed dead"), std::string::npos)
    << describe(end.error());
  EXPECT_EQ(api.requests().last_watch_timeout_s, 1);
  EXPECT_TRUE(rec.copy().empty());
}

TEST_F(kube_watch_test, a_long_watch_is_asked_to_end_within_the_window) {
  auto bounded = kube::kube_client::make(config, kube::watch_bounds{2s, 10s});
  ASSERT_TRUE(bounded) << describe(bounded.error());
  recorder rec;
  auto end = (*bounded)->watch_attachments(api.resource_version(), rec.sink(), in(60s));
  ASSERT_TRUE(end) << describe(end.error());
  EXPECT_EQ(*end, watch_end::closed) << "the server ends it at timeoutSeconds";
  EXPECT_EQ(api.requests().last_watch_timeout_s, 2);
}

TEST_F(kube_watch_test, a_short_deadline_is_asked_for_instead_of_the_window) {
  recorder rec;
  auto end = client->watch_attachments(api.resource_version(), rec.sink(), in(1500ms));
  ASSERT_TRUE(end) << describe(end.error());
  EXPECT_EQ(*end, watch_end::stopped);
  EXPECT_EQ(api.requests().last_watch_timeout_s, 2) << "the deadline, rounded up";
}
