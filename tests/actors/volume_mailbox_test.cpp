// The coalescing mailbox of the volume actor (actors/volume_mailbox.cpp), driven by the test
// (tests/actors/driver_fixture.hpp): a request has been received once send() returns, a
// window closes when the test closes it, and the merged backend call runs when the test runs
// it. No thread, no sleep.

#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "tests/actors/driver_fixture.hpp"

using namespace berth;
using namespace std::chrono_literals;

namespace {

constexpr uint64_t mib = test::fake_backend::mib;

/// The windows the volume scheduled, until the test closes them.
class manual_windows {
public:
  window_timer timer() {
    return [this](const volume_actor& self, uint64_t window, std::chrono::milliseconds) {
      due_.emplace_back(self, window);
    };
  }

  size_t scheduled() const { return due_.size(); }

  std::vector<std::pair<volume_actor, uint64_t>> take() { return std::exchange(due_, {}); }

private:
  std::vector<std::pair<volume_actor, uint64_t>> due_;
};

class volume_mailbox_test : public test::volume_driver_fixture {
protected:
  manual_windows windows;
  std::chrono::milliseconds window = 2s;

  void SetUp() override {
    adjust_env = [this](volume_env& env) {
      env.coalesce_window = window;
      env.timer = windows.timer();
    };
    volume_record rec;
    rec.name = "pvc-1";
    spawn(rec, false);
  }

  void create(uint64_t bytes) {
    volume_spec spec;
    spec.backend = "local";
    spec.required_bytes = bytes;
    auto made = ask<volume_record>(atom::create_v, spec);
    ASSERT_TRUE(made.given && !made.err) << describe(made.err);
  }

  static modify_request expand_to(uint64_t bytes) {
    modify_request req;
    req.required_bytes = bytes;
    req.owner = record_owner::csi;
    return req;
  }

  static modify_request set(const std::string& key, const std::string& value) {
    modify_request req;
    req.parameters = {{key, value}};
    req.owner = record_owner::csi;
    return req;
  }

  /// The request of a modify, answered with the volume's record.
  using handle =
    caf::response_handle<caf::blocking_actor, caf::detail::type_list<volume_record>, true>;

  /// Sends `req`; once it returns, the volume has received it (and answered it, if it
  /// could at once).
  handle send(modify_request req) { return start(atom::modify_v, std::move(req)); }

  /// The answer to `h`; only once it was given, or when no other answer waits.
  answer<volume_record> reply(handle& h) { return answer_of<volume_record>(h); }

  /// Closes every window scheduled so far, without running the call that follows; returns
  /// how many.
  size_t close_windows() {
    auto due = windows.take();
    for (auto& [hdl, w] : due) {
      caf::anon_send(hdl, atom::close_window_v, w);
    }
    sched.run();
    return due.size();
  }

  /// close_windows, and every call that follows.
  size_t fire() {
    auto closed = close_windows();
    run_all_calls();
    return closed;
  }

  /// The volume's record as the fake persistence holds it (empty when none).
  volume_record on_disk() { return test::record_on(*disk, "pvc-1"); }
};

class volume_mailbox_off_test : public volume_mailbox_test {
protected:
  volume_mailbox_off_test() { window = 0ms; }
};

} // namespace

TEST_F(volume_mailbox_test, an_expand_and_a_modify_in_one_window_are_one_backend_call) {
  create(10 * mib);
  auto expand = send(expand_to(20 * mib));
  auto modify = send(set("readAheadKB", "256"));
  EXPECT_EQ(storage->modifies, 0) << "nothing runs before the window closes";
  EXPECT_FALSE(reply(expand).given);
  ASSERT_EQ(fire(), 1u) << "one window for both";
  auto a = reply(expand);
  auto b = reply(modify);
  ASSERT_TRUE(a.given && !a.err) << describe(a.err);
  ASSERT_TRUE(b.given && !b.err) << describe(b.err);
  EXPECT_EQ(storage->modifies, 1);
  auto m = storage->last_modification();
  EXPECT_EQ(m.bytes, 20 * mib);
  EXPECT_EQ(m.parameters, (option_map{{"readAheadKB", "256"}}));
  for (const auto& rec : {a.value, b.value, record(), on_disk()}) {
    EXPECT_EQ(rec.capacity_bytes, 20 * mib);
    EXPECT_EQ(rec.mutable_parameters, (option_map{{"readAheadKB", "256"}}));
    EXPECT_EQ(rec.modifications, 1u);
  }
  EXPECT_EQ(stats->modify_requests.value(modify_result::received), 2u);
  EXPECT_EQ(stats->modify_requests.value(modify_result::merged), 1u);
  EXPECT_EQ(stats->modify_requests.value(modify_result::applied), 2u);
  EXPECT_EQ(stats->modify_backend_calls.value("local"), 1u);
}

TEST_F(volume_mailbox_test, ten_identical_expands_are_one_call_rounded_as_the_backend_provisions) {
  create(10 * mib);
  std::vector<handle> replies;
  for (int i = 0; i < 10; ++i) {
    replies.push_back(send(expand_to(20 * mib + 1)));
  }
  ASSERT_EQ(fire(), 1u);
  for (auto& r : replies) {
    auto out = reply(r);
    ASSERT_TRUE(out.given && !out.err) << describe(out.err);
    EXPECT_EQ(out.value.capacity_bytes, 21 * mib);
  }
  EXPECT_EQ(storage->modifies, 1);
  EXPECT_EQ(storage->expanded_to, 21 * mib);
  EXPECT_EQ(stats->modify_requests.value(modify_result::merged), 9u);
}

TEST_F(volume_mailbox_test, a_conflicting_value_is_refused_and_the_rest_proceed) {
  create(10 * mib);
  auto first = send(expand_to(20 * mib));
  auto other_size = send(expand_to(30 * mib));
  auto ahead = send(set("readAheadKB", "256"));
  auto other_value = send(set("readAheadKB", "512"));
  // The later requests are refused at once, in the step that received them.
  auto refused = reply(other_size);
  ASSERT_TRUE(refused.given);
  EXPECT_TRUE(is(refused.err, ec::aborted)) << describe(refused.err);
  auto msg = describe(refused.err);
  EXPECT_NE(msg.find(std::to_string(30 * mib)), std::string::npos) << msg;
  EXPECT_NE(msg.find(std::to_string(20 * mib)), std::string::npos) << msg;
  auto refused_value = reply(other_value);
  ASSERT_TRUE(refused_value.given);
  ASSERT_TRUE(refused_value.err);
  msg = describe(refused_value.err);
  EXPECT_NE(msg.find("readAheadKB=512"), std::string::npos) << msg;
  EXPECT_NE(msg.find("readAheadKB=256"), std::string::npos) << msg;
  ASSERT_EQ(fire(), 1u);
  EXPECT_FALSE(reply(first).err);
  EXPECT_FALSE(reply(ahead).err);
  EXPECT_EQ(storage->modifies, 1);
  EXPECT_EQ(storage->last_modification().bytes, 20 * mib);
  EXPECT_EQ(stats->modify_requests.value(modify_result::refused_conflict), 2u);
}

TEST_F(volume_mailbox_test, a_backend_failure_reaches_every_merged_caller) {
  create(10 * mib);
  storage->fail_modify = true;
  auto a = send(expand_to(20 * mib));
  auto b = send(set("readAheadKB", "256"));
  auto c = send(set("directIO", "true"));
  fire();
  for (auto* r : {&a, &b, &c}) {
    auto out = reply(*r);
    ASSERT_TRUE(out.given);
    EXPECT_TRUE(is(out.err, ec::backend_failure)) << describe(out.err);
  }
  EXPECT_EQ(storage->modifies, 1);
  auto rec = record();
  EXPECT_EQ(rec.capacity_bytes, 10 * mib);
  EXPECT_TRUE(rec.mutable_parameters.empty());
  EXPECT_EQ(rec.modifications, 0u);
  EXPECT_EQ(stats->modify_requests.value(modify_result::failed), 3u);
}

TEST_F(volume_mailbox_test,
       modifications_that_keep_failing_make_the_volume_abnormal_until_one_works) {
  create(10 * mib);
  storage->fail_modify = true;
  auto fail_once = [&](uint64_t bytes) {
    auto r = send(expand_to(bytes));
    fire();
    ASSERT_TRUE(reply(r).given);
  };
  fail_once(20 * mib);
  fail_once(20 * mib);
  EXPECT_TRUE(stats->health.of(record().name).empty()) << "two failures: the caller's to retry";
  fail_once(20 * mib);
  auto c = stats->health.of(record().name);
  ASSERT_EQ(c.size(), 1U);
  EXPECT_EQ(c[0].reason, abnormal_reason::modify_failing);
  EXPECT_NE(c[0].message.find("its last 3 modifications"), std::string::npos) << c[0].message;
  storage->fail_modify = false;
  auto ok = send(expand_to(20 * mib));
  fire();
  EXPECT_FALSE(reply(ok).err);
  EXPECT_TRUE(stats->health.of(record().name).empty()) << "applied: healthy again";
}

TEST_F(volume_mailbox_test, a_cooldown_refusal_reaches_every_merged_caller_as_resource_exhausted) {
  create(10 * mib);
  storage->cooling_down = true;
  auto a = send(expand_to(20 * mib));
  auto b = send(set("readAheadKB", "256"));
  fire();
  for (auto* r : {&a, &b}) {
    auto out = reply(*r);
    ASSERT_TRUE(out.given);
    EXPECT_TRUE(is(out.err, ec::resource_exhausted)) << describe(out.err);
    EXPECT_NE(describe(out.err).find("may be modified again"), std::string::npos);
  }
  EXPECT_EQ(stats->health.counts()[static_cast<size_t>(abnormal_reason::modify_failing)], 0)
    << "a refusal is not a failure";
  EXPECT_EQ(record().modifications, 0u);
}

TEST_F(volume_mailbox_test, a_request_during_the_backend_call_opens_the_next_window) {
  create(10 * mib);
  auto first = send(expand_to(20 * mib));
  ASSERT_EQ(close_windows(), 1u);
  ASSERT_TRUE(runner->start_next()) << "the merged call runs, and has not returned";
  auto second = send(expand_to(30 * mib)); // another size: no conflict, the window closed
  EXPECT_EQ(windows.scheduled(), 1u) << "the next window is open while the call runs";
  return_held();
  auto a = reply(first);
  ASSERT_TRUE(a.given && !a.err) << describe(a.err);
  EXPECT_EQ(a.value.capacity_bytes, 20 * mib);
  EXPECT_FALSE(reply(second).given);
  ASSERT_EQ(fire(), 1u);
  auto b = reply(second);
  ASSERT_TRUE(b.given && !b.err) << describe(b.err);
  EXPECT_EQ(b.value.capacity_bytes, 30 * mib);
  EXPECT_EQ(storage->modifies, 2);
  EXPECT_EQ(record().modifications, 2u);
}

TEST_F(volume_mailbox_test, a_request_the_volume_already_satisfies_returns_at_once) {
  create(20 * mib);
  auto set_once = send(set("readAheadKB", "256"));
  fire();
  EXPECT_FALSE(reply(set_once).err);
  for (auto req : {set("readAheadKB", "256"), expand_to(20 * mib - 1)}) {
    auto again = send(req);
    auto out = reply(again);
    ASSERT_TRUE(out.given && !out.err) << describe(out.err);
    EXPECT_EQ(out.value.capacity_bytes, 20 * mib);
  }
  EXPECT_EQ(windows.scheduled(), 0u) << "no window was opened";
  EXPECT_EQ(storage->modifies, 1);
  EXPECT_EQ(stats->modify_requests.value(modify_result::satisfied), 2u);
}

TEST_F(volume_mailbox_test, a_shrink_or_a_bad_parameter_is_refused_at_once_and_leaves_the_window) {
  create(20 * mib);
  auto ahead = send(set("readAheadKB", "256"));
  struct bad {
    modify_request req;
    ec code;
    std::string names;
  };
  for (const auto& b : {bad{expand_to(10 * mib), ec::out_of_range, std::to_string(10 * mib)},
                        bad{set("fsType", "xfs"), ec::invalid_argument, "fsType"},
                        bad{set("colour", "red"), ec::invalid_argument, "colour"}}) {
    auto r = send(b.req);
    auto out = reply(r);
    ASSERT_TRUE(out.given) << b.names << " is refused at once";
    EXPECT_TRUE(is(out.err, b.code)) << describe(out.err);
    EXPECT_NE(describe(out.err).find(b.names), std::string::npos) << describe(out.err);
  }
  EXPECT_EQ(storage->modifies, 0);
  ASSERT_EQ(fire(), 1u);
  EXPECT_FALSE(reply(ahead).err);
  auto m = storage->last_modification();
  EXPECT_EQ(m.bytes, 0u) << "the shrink did not reach the window";
  EXPECT_EQ(m.parameters, (option_map{{"readAheadKB", "256"}}));
  EXPECT_EQ(record().capacity_bytes, 20 * mib);
}

TEST_F(volume_mailbox_test, stage_and_publish_are_not_held_up_by_an_open_window) {
  create(10 * mib);
  auto pending = send(expand_to(20 * mib));
  stage_request stage;
  stage.staging_path = "/stage/pvc-1";
  auto staged = ask<atom::ok>(atom::stage_v, stage);
  ASSERT_TRUE(staged.given);
  EXPECT_FALSE(staged.err) << describe(staged.err);
  EXPECT_FALSE(reply(pending).given) << "the window is still open";
  fire();
  EXPECT_FALSE(reply(pending).err);
}

TEST_F(volume_mailbox_test, another_namespace_or_no_volume_is_not_found) {
  auto missing = send(expand_to(20 * mib));
  auto out = reply(missing);
  ASSERT_TRUE(out.given);
  EXPECT_TRUE(is(out.err, ec::not_found)) << describe(out.err);
  create(10 * mib);
  auto docker = set("readAheadKB", "256");
  docker.owner = record_owner::docker;
  auto r = send(docker);
  out = reply(r);
  ASSERT_TRUE(out.given);
  EXPECT_TRUE(is(out.err, ec::not_found)) << describe(out.err);
  EXPECT_EQ(windows.scheduled(), 0u);
}

TEST_F(volume_mailbox_test, a_persist_failure_fails_every_caller_and_the_record_stays) {
  create(10 * mib);
  auto a = send(expand_to(20 * mib));
  auto b = send(set("readAheadKB", "256"));
  disk->fail = true;
  fire();
  for (auto* r : {&a, &b}) {
    auto out = reply(*r);
    ASSERT_TRUE(out.given);
    EXPECT_TRUE(is(out.err, ec::persist_failure)) << describe(out.err);
  }
  disk->fail = false;
  EXPECT_EQ(record().capacity_bytes, 10 * mib);
  EXPECT_EQ(on_disk().capacity_bytes, 10 * mib);
}

TEST_F(volume_mailbox_off_test, with_the_window_off_each_request_is_its_own_call) {
  create(10 * mib);
  auto a = send(expand_to(20 * mib));
  auto b = send(set("readAheadKB", "256"));
  run_all_calls();
  EXPECT_FALSE(reply(a).err);
  EXPECT_FALSE(reply(b).err);
  EXPECT_EQ(windows.scheduled(), 0u);
  EXPECT_EQ(storage->modifies, 2);
  EXPECT_EQ(record().modifications, 2u);
}

TEST_F(volume_mailbox_test, a_modification_that_returns_after_its_timeout_is_adopted_in_turn) {
  create(10 * mib);
  auto h = send(expand_to(20 * mib));
  ASSERT_EQ(close_windows(), 1u);
  ASSERT_TRUE(runner->start_next()) << "the merged call runs, and does not return";
  advance(timeout + 1ms);
  auto first = reply(h);
  ASSERT_TRUE(first.given) << "the caller is answered at the deadline";
  EXPECT_TRUE(is(first.err, ec::timeout)) << describe(first.err);
  EXPECT_EQ(record().capacity_bytes, 10 * mib);
  return_held(); // the backend has it, after its caller was told it failed
  EXPECT_EQ(record().capacity_bytes, 20 * mib) << "the record adopts what the backend did";
  EXPECT_EQ(on_disk().capacity_bytes, 20 * mib) << "durably";
  EXPECT_EQ(storage->modifies, 1) << "adopted, not asked for again";
  auto again = send(expand_to(20 * mib));
  auto satisfied = reply(again);
  ASSERT_TRUE(satisfied.given && !satisfied.err) << describe(satisfied.err);
  EXPECT_EQ(storage->modifies, 1) << "a retry finds it done";
}
