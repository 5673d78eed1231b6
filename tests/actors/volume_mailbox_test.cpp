// The coalescing mailbox of the volume actor (actors/volume_mailbox.cpp) against
// the fake backend and persistence. The window's clock is injected: a window
// closes when the test fires it, never by sleeping.

#include "actors/volume.hpp"

#include <future>
#include <vector>

#include <gtest/gtest.h>

#include "core/errors.hpp"
#include "tests/actors/fakes.hpp"

using namespace berth;
using namespace std::chrono_literals;

namespace {

constexpr uint64_t mib = test::fake_backend::mib;

uint8_t code_of(ec x) {
  return static_cast<uint8_t>(x);
}

/// The windows the volume scheduled; fire() closes them.
class manual_clock {
public:
  window_timer timer() {
    return [this](const volume_actor& self, uint64_t window, std::chrono::milliseconds) {
      std::lock_guard<std::mutex> guard{mtx_};
      due_.emplace_back(self, window);
    };
  }

  size_t scheduled() {
    std::lock_guard<std::mutex> guard{mtx_};
    return due_.size();
  }

  /// Closes every window scheduled so far; returns how many.
  size_t fire() {
    std::vector<std::pair<volume_actor, uint64_t>> due;
    {
      std::lock_guard<std::mutex> guard{mtx_};
      due.swap(due_);
    }
    for (auto& [hdl, window] : due) {
      caf::anon_send(hdl, atom::close_window_v, window);
    }
    return due.size();
  }

private:
  std::mutex mtx_;
  std::vector<std::pair<volume_actor, uint64_t>> due_;
};

using reply = std::future<caf::expected<volume_record>>;

class volume_mailbox_test : public test::volume_fixture {
protected:
  manual_clock clock;
  std::chrono::milliseconds window = 2s;

  void SetUp() override {
    spawn();
  }

  void spawn() {
    spawn_volume("pvc-1", 3s, [this](volume_env& env) {
      env.coalesce_window = window;
      env.timer = clock.timer();
    });
  }

  void create(uint64_t bytes = 10 * mib) {
    volume_spec spec;
    spec.backend = "local";
    spec.required_bytes = bytes;
    auto rec = test::ask<volume_record>(self, vol, atom::create_v, spec);
    ASSERT_TRUE(rec) << describe(rec.error());
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

  /// Sends `req` without waiting; the reply comes through the future.
  reply send(modify_request req) {
    auto done = std::make_shared<std::promise<caf::expected<volume_record>>>();
    auto out = done->get_future();
    auto target = vol;
    // The values go in as spawn arguments, not captures: CAF 0.17 dereferences a null
    // argument tuple when a function actor is spawned without arguments (UBSan reports it).
    ts.sys->spawn(
      [](caf::event_based_actor* a, volume_actor target, modify_request req,
         std::shared_ptr<std::promise<caf::expected<volume_record>>> done) {
        a->request(target, 10s, atom::modify_v, req)
          .then([done](volume_record& rec) { done->set_value(std::move(rec)); },
                [done](caf::error& err) { done->set_value(std::move(err)); });
      },
      target, std::move(req), done);
    return out;
  }

  /// Waits until the volume has taken `n` requests in all (merged or answered).
  void received(uint64_t n) {
    ASSERT_TRUE(eventually([&] { return stats->modify_requests.value(modify_result::received) == n; }))
      << stats->modify_requests.value(modify_result::received) << " of " << n << " received";
  }

  static caf::expected<volume_record> wait(reply& r) {
    if (r.wait_for(5s) != std::future_status::ready) {
      return make_error(ec::timeout, "no reply within 5 s");
    }
    return r.get();
  }

  static bool answered(reply& r) {
    return r.wait_for(0s) == std::future_status::ready;
  }

};

class volume_mailbox_off_test : public volume_mailbox_test {
protected:
  volume_mailbox_off_test() {
    window = 0ms;
  }
};

} // namespace

TEST_F(volume_mailbox_test, an_expand_and_a_modify_in_one_window_are_one_backend_call) {
  create(10 * mib);
  auto expand = send(expand_to(20 * mib));
  auto modify = send(set("readAheadKB", "256"));
  received(2);
  EXPECT_EQ(storage->modifies, 0) << "nothing runs before the window closes";
  EXPECT_FALSE(answered(expand));
  ASSERT_EQ(clock.fire(), 1u) << "one window for both";
  auto a = wait(expand);
  auto b = wait(modify);
  ASSERT_TRUE(a) << describe(a.error());
  ASSERT_TRUE(b) << describe(b.error());
  EXPECT_EQ(storage->modifies, 1);
  auto m = storage->last_modification();
  EXPECT_EQ(m.bytes, 20 * mib);
  EXPECT_EQ(m.parameters, (option_map{{"readAheadKB", "256"}}));
  for (const auto& rec : {*a, *b, get(), on_disk()}) {
    EXPECT_EQ(rec.capacity_bytes, 20 * mib);
    EXPECT_EQ(rec.mutable_parameters, (option_map{{"readAheadKB", "256"}}));
    EXPECT_EQ(rec.modifications, 1u);
  }
  EXPECT_EQ(stats->modify_requests.value(modify_result::merged), 1u);
  EXPECT_EQ(stats->modify_requests.value(modify_result::applied), 2u);
  EXPECT_EQ(stats->modify_backend_calls.value("local"), 1u);
}

TEST_F(volume_mailbox_test, ten_identical_expands_are_one_call_rounded_as_the_backend_provisions) {
  create(10 * mib);
  std::vector<reply> replies;
  for (int i = 0; i < 10; ++i) {
    replies.push_back(send(expand_to(20 * mib + 1)));
  }
  received(10);
  ASSERT_EQ(clock.fire(), 1u);
  for (auto& r : replies) {
    auto rec = wait(r);
    ASSERT_TRUE(rec) << describe(rec.error());
    EXPECT_EQ(rec->capacity_bytes, 21 * mib);
  }
  EXPECT_EQ(storage->modifies, 1);
  EXPECT_EQ(storage->expanded_to, 21 * mib);
  EXPECT_EQ(stats->modify_requests.value(modify_result::merged), 9u);
}

TEST_F(volume_mailbox_test, a_conflicting_value_is_refused_and_the_rest_proceed) {
  create(10 * mib);
  auto first = send(expand_to(20 * mib));
  received(1);
  auto other_size = send(expand_to(30 * mib));
  auto ahead = send(set("readAheadKB", "256"));
  received(3);
  auto other_value = send(set("readAheadKB", "512"));
  received(4);
  // The later requests are refused at once, in the step that received them.
  ASSERT_TRUE(answered(other_size));
  auto refused = other_size.get();
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error().code(), code_of(ec::aborted));
  auto msg = describe(refused.error());
  EXPECT_NE(msg.find(std::to_string(30 * mib)), std::string::npos) << msg;
  EXPECT_NE(msg.find(std::to_string(20 * mib)), std::string::npos) << msg;
  ASSERT_TRUE(answered(other_value));
  auto refused_value = other_value.get();
  ASSERT_FALSE(refused_value);
  msg = describe(refused_value.error());
  EXPECT_NE(msg.find("readAheadKB=512"), std::string::npos) << msg;
  EXPECT_NE(msg.find("readAheadKB=256"), std::string::npos) << msg;
  ASSERT_EQ(clock.fire(), 1u);
  ASSERT_TRUE(wait(first));
  ASSERT_TRUE(wait(ahead));
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
  received(3);
  clock.fire();
  for (auto* r : {&a, &b, &c}) {
    auto out = wait(*r);
    ASSERT_FALSE(out);
    EXPECT_EQ(out.error().code(), code_of(ec::backend_failure)) << describe(out.error());
  }
  EXPECT_EQ(storage->modifies, 1);
  EXPECT_EQ(get().capacity_bytes, 10 * mib);
  EXPECT_TRUE(get().mutable_parameters.empty());
  EXPECT_EQ(get().modifications, 0u);
  EXPECT_EQ(stats->modify_requests.value(modify_result::failed), 3u);
}

TEST_F(volume_mailbox_test, a_cooldown_refusal_reaches_every_merged_caller_as_resource_exhausted) {
  create(10 * mib);
  storage->cooling_down = true;
  auto a = send(expand_to(20 * mib));
  auto b = send(set("readAheadKB", "256"));
  received(2);
  clock.fire();
  for (auto* r : {&a, &b}) {
    auto out = wait(*r);
    ASSERT_FALSE(out);
    EXPECT_EQ(out.error().code(), code_of(ec::resource_exhausted)) << describe(out.error());
    EXPECT_NE(describe(out.error()).find("may be modified again"), std::string::npos);
  }
  EXPECT_EQ(get().modifications, 0u);
}

TEST_F(volume_mailbox_test, a_request_during_the_backend_call_opens_the_next_window) {
  create(10 * mib);
  storage->hold_modify = true;
  auto first = send(expand_to(20 * mib));
  received(1);
  clock.fire();
  storage->wait_for_modify_running();
  auto second = send(expand_to(30 * mib)); // another size: no conflict, the window closed
  received(2);
  EXPECT_EQ(clock.scheduled(), 1u) << "the next window is open while the call runs";
  storage->release_modify();
  auto a = wait(first);
  ASSERT_TRUE(a) << describe(a.error());
  EXPECT_EQ(a->capacity_bytes, 20 * mib);
  EXPECT_FALSE(answered(second));
  clock.fire();
  auto b = wait(second);
  ASSERT_TRUE(b) << describe(b.error());
  EXPECT_EQ(b->capacity_bytes, 30 * mib);
  EXPECT_EQ(storage->modifies, 2);
  EXPECT_EQ(get().modifications, 2u);
}

TEST_F(volume_mailbox_test, a_request_the_volume_already_satisfies_returns_at_once) {
  create(20 * mib);
  auto set_once = send(set("readAheadKB", "256"));
  received(1);
  clock.fire();
  ASSERT_TRUE(wait(set_once));
  for (auto req : {set("readAheadKB", "256"), expand_to(20 * mib - 1)}) {
    auto again = send(req);
    auto out = wait(again);
    ASSERT_TRUE(out) << describe(out.error());
    EXPECT_EQ(out->capacity_bytes, 20 * mib);
  }
  EXPECT_EQ(clock.scheduled(), 0u) << "no window was opened";
  EXPECT_EQ(storage->modifies, 1);
  EXPECT_EQ(stats->modify_requests.value(modify_result::satisfied), 2u);
}

TEST_F(volume_mailbox_test, a_shrink_or_a_bad_parameter_is_refused_at_once_and_leaves_the_window) {
  create(20 * mib);
  auto ahead = send(set("readAheadKB", "256"));
  received(1);
  struct bad {
    modify_request req;
    ec code;
    std::string names;
  };
  for (const auto& b : {bad{expand_to(10 * mib), ec::out_of_range, std::to_string(10 * mib)},
                        bad{set("fsType", "xfs"), ec::invalid_argument, "fsType"},
                        bad{set("colour", "red"), ec::invalid_argument, "colour"}}) {
    auto r = send(b.req);
    auto out = wait(r);
    ASSERT_FALSE(out) << b.names;
    EXPECT_EQ(out.error().code(), code_of(b.code)) << describe(out.error());
    EXPECT_NE(describe(out.error()).find(b.names), std::string::npos) << describe(out.error());
  }
  EXPECT_EQ(storage->modifies, 0);
  ASSERT_EQ(clock.fire(), 1u);
  ASSERT_TRUE(wait(ahead));
  auto m = storage->last_modification();
  EXPECT_EQ(m.bytes, 0u) << "the shrink did not reach the window";
  EXPECT_EQ(m.parameters, (option_map{{"readAheadKB", "256"}}));
  EXPECT_EQ(get().capacity_bytes, 20 * mib);
}

TEST_F(volume_mailbox_test, stage_and_publish_are_not_held_up_by_an_open_window) {
  create(10 * mib);
  auto pending = send(expand_to(20 * mib));
  received(1);
  stage_request stage;
  stage.staging_path = "/stage/pvc-1";
  EXPECT_FALSE(test::call<atom::ok>(self, vol, atom::stage_v, stage));
  EXPECT_FALSE(answered(pending)) << "the window is still open";
  clock.fire();
  ASSERT_TRUE(wait(pending));
}

TEST_F(volume_mailbox_test, another_namespace_or_no_volume_is_not_found) {
  auto missing = send(expand_to(20 * mib));
  auto out = wait(missing);
  ASSERT_FALSE(out);
  EXPECT_EQ(out.error().code(), code_of(ec::not_found));
  create(10 * mib);
  auto docker = set("readAheadKB", "256");
  docker.owner = record_owner::docker;
  auto r = send(docker);
  out = wait(r);
  ASSERT_FALSE(out);
  EXPECT_EQ(out.error().code(), code_of(ec::not_found)) << describe(out.error());
  EXPECT_EQ(clock.scheduled(), 0u);
}

TEST_F(volume_mailbox_test, a_persist_failure_fails_every_caller_and_the_record_stays) {
  create(10 * mib);
  auto a = send(expand_to(20 * mib));
  auto b = send(set("readAheadKB", "256"));
  received(2);
  disk->fail = true;
  clock.fire();
  for (auto* r : {&a, &b}) {
    auto out = wait(*r);
    ASSERT_FALSE(out);
    EXPECT_EQ(out.error().code(), code_of(ec::persist_failure)) << describe(out.error());
  }
  disk->fail = false;
  EXPECT_EQ(get().capacity_bytes, 10 * mib);
  EXPECT_EQ(on_disk().capacity_bytes, 10 * mib);
}

TEST_F(volume_mailbox_off_test, with_the_window_off_each_request_is_its_own_call) {
  create(10 * mib);
  auto a = send(expand_to(20 * mib));
  auto b = send(set("readAheadKB", "256"));
  ASSERT_TRUE(wait(a));
  ASSERT_TRUE(wait(b));
  EXPECT_EQ(clock.scheduled(), 0u);
  EXPECT_EQ(storage->modifies, 2);
  EXPECT_EQ(get().modifications, 2u);
}
