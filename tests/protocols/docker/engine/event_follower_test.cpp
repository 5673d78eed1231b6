#include "protocols/docker/engine/event_follower.hpp"

#include <deque>
#include <future>

#include <gtest/gtest.h>

#include "core/errors.hpp"
#include "tests/support/captured_log.hpp"

using namespace berth;
using namespace berth::docker_engine;
using namespace std::chrono_literals;

namespace {

/// A stand-in engine_api whose events() plays a script, one step per call.
struct scripted_api : engine_api {
  struct step {
    bool fail = false;              ///< answer ec::unavailable
    engine_instance who;            ///< else: open from this instance,
    std::vector<container_event> events; ///< send these, then end:
    events_end end = events_end::closed; ///< how the stream ends
    bool stop = false;                   ///< raise the stop before this step ends
  };
  std::deque<step> script;
  std::vector<int64_t> since_asked;
  std::vector<std::chrono::steady_clock::time_point> calls;
  std::promise<void> open_ended; ///< set when a call finds the script empty

  std::string describe() const override {
    return "unix:///scripted.sock";
  }
  caf::expected<ping_reply> ping() override {
    return make_error(ec::unsupported, "scripted");
  }
  caf::expected<engine_info> info() override {
    return make_error(ec::unsupported, "scripted");
  }
  caf::expected<container_list> containers() override {
    return make_error(ec::unsupported, "scripted");
  }
  caf::expected<events_end> events(const event_handler& h, stop_signal& stop, int64_t since) override {
    since_asked.push_back(since);
    calls.push_back(std::chrono::steady_clock::now());
    if (script.empty()) {
      open_ended.set_value();
      stop.wait_for(10s); // the stream stays open until the test stops it
      return events_end::stopped;
    }
    auto s = script.front();
    script.pop_front();
    if (s.stop) {
      stop.request_stop();
    }
    if (s.fail) {
      return make_error(ec::unavailable, "Docker API unix:///scripted.sock: connect: Connection refused");
    }
    h.on_open(s.who);
    for (const auto& ev : s.events) {
      h.on_event(ev);
    }
    return s.end;
  }
};

container_event event(const char* action, int64_t t) {
  return container_event{action, "c1", -1, t};
}

using berth::test_support::captured_log;

} // namespace

TEST(docker_engine_follower, reconnects_with_backoff_and_reports_new_instances) {
  scripted_api api;
  engine_instance a{100, 5000, "dockerd"};
  engine_instance b{200, 9000, "dockerd"};
  api.script.push_back({true, {}, {}});                      // absent at the start
  api.script.push_back({true, {}, {}});
  api.script.push_back({false, a, {event("start", 10), event("die", 20)}});
  api.script.push_back({false, a, {event("destroy", 30)}});  // the stream dropped, same dockerd
  api.script.push_back({true, {}, {}});                      // dockerd went away
  api.script.push_back({true, {}, {}});
  api.script.push_back({true, {}, {}});
  api.script.push_back({false, b, {event("start", 40)}});    // a new dockerd

  stop_signal stop;
  std::vector<std::pair<engine_instance, bool>> opens;
  std::vector<std::string> actions;
  follow_handler h;
  h.on_open = [&](const engine_instance& who, bool changed) {
    opens.emplace_back(who, changed);
    if (who == b) {
      stop.request_stop(); // the test's end: the next call returns at once
    }
  };
  h.on_event = [&](const container_event& ev) { actions.push_back(ev.action); };
  captured_log log;
  follow_events(api, h, stop, follow_options{10ms, 40ms});

  // Once per outage, not per retry; the reopen of a dropped stream (same dockerd) is quiet.
  EXPECT_EQ(log.count("[warning] dockerd does not answer"), 1) << log.out.str();
  EXPECT_EQ(log.count("[warning] dockerd went away"), 1) << log.out.str();
  EXPECT_EQ(log.count("[info] Docker API unix:///scripted.sock: dockerd answers again"), 2) << log.out.str();
  EXPECT_EQ(log.count("dockerd pid 200 (started 9000 ticks after boot), a new instance"), 1) << log.out.str();
  EXPECT_EQ(log.count("[warning]") + log.count("[info]"), 4) << log.out.str();

  ASSERT_EQ(opens.size(), 3u);
  EXPECT_EQ(opens[0], std::make_pair(a, true));
  EXPECT_EQ(opens[1], std::make_pair(a, false));
  EXPECT_EQ(opens[2], std::make_pair(b, true));
  EXPECT_EQ(actions, (std::vector<std::string>{"start", "die", "destroy", "start"}));
  // Reconnections ask for what came after the last event delivered.
  EXPECT_EQ(api.since_asked, (std::vector<int64_t>{0, 0, 0, 21, 31, 31, 31, 31}));
  // Backoff: 10, 20 (failures), reset at the open: 10 after it, 10 after the next open, then
  // 20, 40, 40 (capped).
  ASSERT_EQ(api.calls.size(), 8u);
  auto gap = [&](size_t i) { return api.calls[i] - api.calls[i - 1]; };
  EXPECT_GE(gap(1), 10ms);
  EXPECT_GE(gap(2), 20ms);
  EXPECT_GE(gap(3), 10ms);
  EXPECT_LT(gap(3), 20ms + 50ms);
  EXPECT_GE(gap(6), 20ms);
  EXPECT_GE(gap(7), 40ms);
}

TEST(docker_engine_follower, a_stop_during_the_backoff_returns_at_once) {
  scripted_api api;
  // The first call fails with the stop raised: the follower reaches its 10 s backoff with
  // it, and must not wait there.
  api.script.push_back({true, {}, {}, events_end::closed, true});
  for (int i = 0; i < 4; ++i) {
    api.script.push_back({true, {}, {}});
  }
  stop_signal stop;
  auto start = std::chrono::steady_clock::now();
  follow_events(api, {}, stop, follow_options{10s, 10s});
  EXPECT_LT(std::chrono::steady_clock::now() - start, 5s);
  EXPECT_EQ(api.calls.size(), 1u);
}

TEST(docker_engine_follower, a_stop_while_the_stream_is_open_returns) {
  scripted_api api; // empty script: the stream stays open until stopped
  stop_signal stop;
  auto opened = api.open_ended.get_future();
  auto stopper = std::async(std::launch::async, [&] {
    // Stops once the stream is open, not before.
    ASSERT_EQ(opened.wait_for(10s), std::future_status::ready);
    stop.request_stop();
  });
  follow_events(api, {}, stop);
  stopper.get();
  EXPECT_EQ(api.calls.size(), 1u);
}

TEST(docker_engine_follower, a_stream_ended_for_its_silence_is_opened_again_at_once_and_quietly) {
  scripted_api api;
  engine_instance a{100, 5000, "dockerd"};
  api.script.push_back({false, a, {event("start", 10)}, events_end::idle});
  api.script.push_back({false, a, {}, events_end::closed});
  stop_signal stop;
  std::vector<bool> changed;
  follow_handler h;
  h.on_open = [&](const engine_instance&, bool c) {
    changed.push_back(c);
    if (changed.size() == 2) {
      stop.request_stop();
    }
  };
  captured_log log;
  // A backoff far longer than the test may take: an idle end must not wait for it.
  follow_events(api, h, stop, follow_options{20s, 20s});
  ASSERT_EQ(api.calls.size(), 2u);
  EXPECT_LT(api.calls[1] - api.calls[0], 10s) << "the reopen waited for the backoff";
  EXPECT_EQ(changed, (std::vector<bool>{true, false})) << "the same dockerd";
  EXPECT_EQ(api.since_asked, (std::vector<int64_t>{0, 11})) << "nothing after the last event is lost";
  EXPECT_EQ(log.count("[warning]"), 0) << log.out.str();
  EXPECT_EQ(log.count("[info]"), 1) << "only the first open: " << log.out.str();
}
