// docker_sync on its threads: the start pass, a die's grace on the real clock (short),
// berthctl release through the desk, and a bounded stop while the events stream is open.

#include "protocols/docker/sync/docker_sync.hpp"

#include <future>
#include <thread>

#include <gtest/gtest.h>

#include "core/errors.hpp"
#include "tests/protocols/docker/sync/fake_engine.hpp"

using namespace berth;
using namespace berth::docker_sync;
using namespace std::chrono_literals;

namespace {

const std::string id_a = "aaaa1111aaaa1111aaaa1111aaaa1111aaaa1111aaaa1111aaaa1111aaaa1111";
const std::string ctr_c = "cccc3333cccc3333cccc3333cccc3333";

int64_t ms_now(std::chrono::milliseconds ago = 0ms) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
           (release_clock::now() - ago).time_since_epoch())
    .count();
}

class docker_sync_test : public ::testing::Test {
protected:
  std::shared_ptr<test::fake_engine> engine = std::make_shared<test::fake_engine>();
  test::fake_registry_seams registry;
  mount_map map;

  sync_config config(std::chrono::milliseconds grace = 10s, bool with_api = true) {
    sync_config cfg;
    if (with_api) {
      cfg.driver.api = engine;
    }
    cfg.driver.records = registry.source();
    cfg.driver.sink = registry.sink();
    cfg.driver.die_grace = grace;
    cfg.driver.alive = [](const dockerd_key&) { return false; };
    cfg.driver.read_map = [this](const std::string&) { return caf::expected<mount_map>{map}; };
    cfg.follow = docker_engine::follow_options{10ms, 20ms};
    return cfg;
  }
};

} // namespace

TEST_F(docker_sync_test, the_start_pass_runs_on_its_own_thread_and_stop_is_bounded) {
  registry.records = {test::docker_record("kv", id_a, 1, "1111@500", ms_now(60s))};
  berth::docker_sync::docker_sync sync{config()};
  sync.start();
  EXPECT_TRUE(registry.wait_for_releases(1));
  auto t0 = std::chrono::steady_clock::now();
  sync.stop(); // the events stream is open (the fake blocks until stopped)
  EXPECT_LT(std::chrono::steady_clock::now() - t0, 1s);
  sync.stop(); // idempotent
  EXPECT_EQ(registry.releases().size(), 1u) << "the next passes found nothing left";
}

TEST_F(docker_sync_test, a_die_is_released_once_its_grace_has_passed) {
  map = {{id_a, ctr_c}};
  registry.records = {test::docker_record("kv", id_a, 1, "4242@1000", ms_now(60s))};
  engine->set_running(ctr_c, "exited");
  auto die_at = std::chrono::duration_cast<std::chrono::nanoseconds>(
                  release_clock::now().time_since_epoch())
                  .count();
  engine->to_send = {docker_engine::container_event{"die", ctr_c, 137, die_at}};
  berth::docker_sync::docker_sync sync{config(60ms)};
  auto t0 = std::chrono::steady_clock::now();
  sync.start();
  ASSERT_TRUE(registry.wait_for_releases(1));
  EXPECT_GE(std::chrono::steady_clock::now() - t0, 50ms) << "not before the grace";
  EXPECT_EQ(registry.releases()[0].second.reason, release_reason::died);
  sync.stop();
}

TEST_F(docker_sync_test, berthctl_release_is_answered_from_the_worker_and_refused_after_stop) {
  registry.records = {test::docker_record("kv", id_a, 2, "", 0)};
  berth::docker_sync::docker_sync sync{config(10s, false)}; // --docker-api ""
  sync.start();
  std::promise<caf::expected<operator_release_result>> answer;
  auto caller = std::this_thread::get_id();
  std::thread::id answered_on;
  sync.release("kv", id_a, [&](caf::expected<operator_release_result> res) {
    answered_on = std::this_thread::get_id();
    answer.set_value(std::move(res));
  });
  auto fut = answer.get_future();
  ASSERT_EQ(fut.wait_for(5s), std::future_status::ready);
  auto res = fut.get();
  ASSERT_TRUE(res) << describe(res.error());
  EXPECT_EQ(res->dropped, 2u);
  EXPECT_FALSE(res->checked);
  EXPECT_NE(answered_on, caller);
  sync.stop();
  bool called = false;
  sync.release("kv", id_a, [&](caf::expected<operator_release_result> res) {
    called = true;
    ASSERT_FALSE(res);
    EXPECT_EQ(static_cast<ec>(res.error().code()), ec::aborted);
  });
  EXPECT_TRUE(called) << "answered at once once stopped";
}
