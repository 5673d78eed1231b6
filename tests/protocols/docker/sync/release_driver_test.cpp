// The dockerd reconciliation's triggers and the operator's release, on a fake clock, against
// a stand-in Engine API and fake registry seams (no threads, no sleeping).

#include "protocols/docker/sync/release_driver.hpp"

#include <gtest/gtest.h>

#include "core/errors.hpp"
#include "core/limits.hpp"
#include "tests/protocols/docker/sync/fake_engine.hpp"

using namespace berth;
using namespace berth::docker_sync;
using namespace std::chrono_literals;

namespace {

const release_clock::time_point epoch{std::chrono::seconds(1'800'000'000)};

release_clock::time_point at(std::chrono::milliseconds t) {
  return epoch + t;
}

int64_t ms_at(std::chrono::milliseconds t) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(at(t).time_since_epoch()).count();
}

int64_t nano_at(std::chrono::milliseconds t) {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(at(t).time_since_epoch()).count();
}

const std::string old_dockerd = "1111@500";   // killed: its counts are stale
const std::string cur_dockerd = "4242@1000";  // fake_engine's default instance
const std::string id_a = "aaaa1111aaaa1111aaaa1111aaaa1111aaaa1111aaaa1111aaaa1111aaaa1111";
const std::string id_b = "bbbb2222bbbb2222bbbb2222bbbb2222bbbb2222bbbb2222bbbb2222bbbb2222";
const std::string ctr_c = "cccc3333cccc3333cccc3333cccc3333";

docker_engine::container_event ev(const char* action, const std::string& cid,
                                  std::chrono::milliseconds t) {
  return docker_engine::container_event{action, cid, -1, nano_at(t)};
}

class release_driver_test : public ::testing::Test {
protected:
  std::shared_ptr<test::fake_engine> engine = std::make_shared<test::fake_engine>();
  test::fake_registry_seams registry;
  std::shared_ptr<telemetry> stats = std::make_shared<telemetry>(std::vector<std::string>{"local"});
  std::set<std::string> alive_keys;
  /// What config.v2.json holds; unreadable when none.
  std::optional<mount_map> map;
  int map_reads = 0;

  driver_config config(bool with_api = true) {
    driver_config cfg;
    if (with_api) {
      cfg.api = engine;
    }
    cfg.records = registry.source();
    cfg.sink = registry.sink();
    cfg.stats = stats;
    cfg.die_grace = 10s;
    cfg.alive = [this](const dockerd_key& k) { return alive_keys.count(k) > 0; };
    cfg.read_map = [this](const std::string& root) -> caf::expected<mount_map> {
      ++map_reads;
      EXPECT_EQ(root, "/fake/docker");
      if (!map) {
        return make_error(ec::unavailable, "cannot list /fake/docker/containers: Permission denied");
      }
      return *map;
    };
    return cfg;
  }
};

} // namespace

// -- the triggers ----------------------------------------------------------------

TEST_F(release_driver_test, at_start_an_older_dockerds_id_is_released_if_unchanged) {
  registry.records = {test::docker_record("kv", id_a, 2, old_dockerd, ms_at(10s))};
  engine->set_running(ctr_c, "exited");
  release_driver d{config()};
  test::captured_log log;
  d.started(at(1000s));
  auto sent = registry.releases();
  ASSERT_EQ(sent.size(), 1u);
  EXPECT_EQ(sent[0].first, "kv");
  EXPECT_EQ(sent[0].second.id, id_a);
  EXPECT_EQ(sent[0].second.reason, release_reason::stale_instance);
  EXPECT_TRUE(sent[0].second.if_unchanged);
  EXPECT_EQ(sent[0].second.seen, (mount_id_origin{old_dockerd, ms_at(10s)}));
  EXPECT_NE(sent[0].second.log.find("count 2 dropped"), std::string::npos) << sent[0].second.log;
  EXPECT_EQ(log.count("dockerd 4242@1000 is new (before: none"), 1) << log.out.str();
  EXPECT_EQ(stats->docker_engine_up.value(), 1);
}

TEST_F(release_driver_test, a_new_dockerd_instance_reconciles_every_record) {
  // dockerd 4242 made the count and runs the container: nothing to release.
  registry.records = {test::docker_record("kv", id_a, 1, cur_dockerd, ms_at(10s))};
  engine->set_running(ctr_c, "running");
  release_driver d{config()};
  d.started(at(100s));
  EXPECT_TRUE(registry.releases().empty());
  d.opened(engine->who, at(101s)); // the events stream: the same instance, nothing new
  EXPECT_TRUE(registry.releases().empty());
  // dockerd SIGKILLed and started again: pid 5151; the container exited (137).
  engine->set_instance({5151, 2000, "dockerd"});
  engine->set_running(ctr_c, "exited");
  test::captured_log log;
  d.opened(engine->who, at(200s));
  EXPECT_EQ(log.count("dockerd 5151@2000 is new (before: 4242@1000): reconciling mount IDs"), 1)
    << log.out.str();
  auto sent = registry.releases();
  ASSERT_EQ(sent.size(), 1u);
  EXPECT_EQ(sent[0].second.reason, release_reason::stale_instance);
}

TEST_F(release_driver_test, a_destroy_event_releases_the_id_of_its_container) {
  map = mount_map{{id_a, ctr_c}};
  registry.records = {test::docker_record("kv", id_a, 1, cur_dockerd, ms_at(10s))};
  engine->set_running(ctr_c, "exited");
  release_driver d{config()};
  d.started(at(100s));
  EXPECT_TRUE(registry.releases().empty()) << "exited 0 s ago: no die seen, nothing to decide";
  engine->remove(ctr_c);
  int lists = engine->list_calls;
  d.event(ev("destroy", ctr_c, 150s), at(150s));
  d.event(ev("start", "other", 150s), at(150s)); // not kept
  EXPECT_TRUE(registry.releases().empty()) << "events wait for settle";
  d.settle(at(150s));
  EXPECT_EQ(engine->list_calls, lists + 1) << "one fresh list per batch of events";
  auto sent = registry.releases();
  ASSERT_EQ(sent.size(), 1u);
  EXPECT_EQ(sent[0].second.reason, release_reason::container_gone);
  d.settle(at(151s));
  EXPECT_EQ(engine->list_calls, lists + 1) << "nothing new: no list";
}

TEST_F(release_driver_test, a_removed_containers_ids_keep_their_tie_after_its_config_is_gone) {
  // Counted before berth recorded instances (""): only the map may name its container.
  map = mount_map{{id_a, ctr_c}};
  registry.records = {test::docker_record("kv", id_a, 1, "", ms_at(10s))};
  engine->set_running(ctr_c, "exited");
  release_driver d{config()};
  d.started(at(100s));
  EXPECT_TRUE(registry.releases().empty());
  // docker rm -f: dockerd deletes containers/<id>/ (config.v2.json too), then sends destroy.
  engine->remove(ctr_c);
  map = mount_map{};
  d.event(ev("destroy", ctr_c, 150s), at(150s));
  d.settle(at(150s));
  auto sent = registry.releases();
  ASSERT_EQ(sent.size(), 1u);
  EXPECT_EQ(sent[0].second.reason, release_reason::container_gone);
}

TEST_F(release_driver_test, a_die_releases_when_its_grace_ends_and_not_before) {
  map = mount_map{{id_a, ctr_c}};
  registry.records = {test::docker_record("kv", id_a, 1, cur_dockerd, ms_at(10s))};
  engine->set_running(ctr_c, "running");
  release_driver d{config()};
  d.started(at(100s));
  EXPECT_FALSE(d.next_wakeup());
  engine->set_running(ctr_c, "exited");
  d.event(ev("die", ctr_c, 200s), at(200s));
  d.settle(at(200s));
  EXPECT_TRUE(registry.releases().empty()) << "within the grace period";
  ASSERT_TRUE(d.next_wakeup());
  EXPECT_EQ(*d.next_wakeup(), at(210s));
  d.tick(at(209'999ms));
  EXPECT_TRUE(registry.releases().empty());
  d.tick(at(210s));
  auto sent = registry.releases();
  ASSERT_EQ(sent.size(), 1u);
  EXPECT_EQ(sent[0].second.reason, release_reason::died);
  EXPECT_FALSE(d.next_wakeup());
}

TEST_F(release_driver_test, a_docker_cp_after_the_die_is_not_released_when_the_grace_ends) {
  map = mount_map{{id_a, ctr_c}, {id_b, ctr_c}};
  engine->set_running(ctr_c, "exited");
  release_driver d{config()};
  d.started(at(100s));
  d.event(ev("die", ctr_c, 200s), at(200s));
  d.settle(at(200s));
  // `docker cp` into the stopped container mounts a fresh ID after the die.
  registry.records = {test::docker_record("kv", id_b, 1, cur_dockerd, ms_at(205s))};
  d.tick(at(210s));
  EXPECT_TRUE(registry.releases().empty());
}

TEST_F(release_driver_test, an_id_of_another_live_dockerd_is_kept) {
  // --docker-api names dockerd 4242; dockerd 7777, still running, made the count.
  registry.records = {test::docker_record("kv", id_a, 1, "7777@3000", ms_at(10s))};
  alive_keys = {"7777@3000"};
  release_driver d{config()};
  d.started(at(1000s));
  EXPECT_TRUE(registry.releases().empty());
  alive_keys.clear(); // it is gone now
  d.opened(engine->who, at(1001s));
  ASSERT_EQ(registry.releases().size(), 1u);
}

TEST_F(release_driver_test, nothing_is_released_while_dockerd_does_not_answer) {
  registry.records = {test::docker_record("kv", id_a, 1, old_dockerd, ms_at(10s))};
  engine->set_up(false);
  release_driver d{config()};
  test::captured_log log;
  d.started(at(100s));
  d.event(ev("destroy", ctr_c, 101s), at(101s));
  d.settle(at(101s));
  EXPECT_TRUE(registry.releases().empty());
  EXPECT_EQ(stats->docker_engine_up.value(), 0);
  EXPECT_EQ(log.count("mount IDs not reconciled"), 1) << "once per outage: " << log.out.str();
  engine->set_up(true); // dockerd appears: berth catches up
  d.opened(engine->who, at(150s));
  EXPECT_EQ(registry.releases().size(), 1u);
  EXPECT_EQ(stats->docker_engine_up.value(), 1);
  d.down();
  EXPECT_EQ(stats->docker_engine_up.value(), 0);
}

TEST_F(release_driver_test, an_unreadable_mount_map_is_logged_once_and_decided_per_volume) {
  registry.records = {test::docker_record("kv", id_a, 1, cur_dockerd, ms_at(10s))};
  engine->set_running(ctr_c, "running");
  release_driver d{config()};
  test::captured_log log;
  d.started(at(100s));
  d.event(ev("die", "elsewhere", 101s), at(101s));
  d.settle(at(101s));
  EXPECT_EQ(map_reads, 2);
  EXPECT_EQ(log.count("dockerd's mount IDs cannot be tied to containers"), 1) << log.out.str();
  EXPECT_TRUE(registry.releases().empty()) << "a running container mounts kv";
}

// -- berthctl release ------------------------------------------------------------

TEST_F(release_driver_test, an_operator_release_checked_against_dockerd_drops_the_id) {
  map = mount_map{{id_a, ctr_c}};
  registry.records = {test::docker_record("kv", id_a, 3, "", ms_at(10s))}; // ECS's, say
  engine->set_running(ctr_c, "exited");
  release_driver d{config()};
  auto got = d.operator_release("kv", id_a, at(100s));
  ASSERT_TRUE(got) << describe(got.error());
  EXPECT_EQ(got->dropped, 3u);
  EXPECT_TRUE(got->checked);
  EXPECT_EQ(got->unchecked_why, "");
  auto sent = registry.releases();
  ASSERT_EQ(sent.size(), 1u);
  EXPECT_FALSE(sent[0].second.if_unchanged);
  EXPECT_EQ(sent[0].second.reason, release_reason::operator_request);
}

TEST_F(release_driver_test, an_operator_release_is_refused_while_its_container_runs) {
  map = mount_map{{id_a, ctr_c}};
  registry.records = {test::docker_record("kv", id_a, 1, cur_dockerd, ms_at(10s))};
  engine->set_running(ctr_c, "running");
  release_driver d{config()};
  auto got = d.operator_release("kv", id_a, at(100s));
  ASSERT_FALSE(got);
  EXPECT_EQ(static_cast<ec>(got.error().code()), ec::in_use);
  EXPECT_NE(describe(got.error()).find(ctr_c.substr(0, 12)), std::string::npos)
    << describe(got.error());
  EXPECT_TRUE(registry.releases().empty());
}

TEST_F(release_driver_test, an_operator_release_with_dockerd_down_is_unchecked_and_says_why) {
  registry.records = {test::docker_record("kv", id_a, 1, cur_dockerd, ms_at(10s))};
  engine->set_running(ctr_c, "running"); // not asked: dockerd is down
  engine->set_up(false);
  release_driver d{config()};
  test::captured_log log;
  auto got = d.operator_release("kv", id_a, at(100s));
  ASSERT_TRUE(got) << describe(got.error());
  EXPECT_EQ(got->dropped, 1u);
  EXPECT_FALSE(got->checked);
  EXPECT_NE(got->unchecked_why.find("Connection refused"), std::string::npos) << got->unchecked_why;
  EXPECT_EQ(log.count("not checked against dockerd: "), 1) << log.out.str();
  ASSERT_EQ(registry.releases().size(), 1u);
}

TEST_F(release_driver_test, an_operator_release_with_the_api_off_is_unchecked) {
  registry.records = {test::docker_record("kv", id_a, 1, cur_dockerd, ms_at(10s))};
  release_driver d{config(false)};
  d.started(at(1s)); // off: no pass at all
  EXPECT_EQ(d.passes(), 0u);
  auto got = d.operator_release("kv", id_a, at(100s));
  ASSERT_TRUE(got) << describe(got.error());
  EXPECT_FALSE(got->checked);
  EXPECT_NE(got->unchecked_why.find("--docker-api"), std::string::npos) << got->unchecked_why;
}

TEST_F(release_driver_test, an_operator_release_of_an_unknown_volume_or_id_is_not_found) {
  registry.records = {test::docker_record("kv", id_a, 1, cur_dockerd, ms_at(10s))};
  release_driver d{config()};
  auto none = d.operator_release("nope", id_a, at(100s));
  ASSERT_FALSE(none);
  EXPECT_EQ(static_cast<ec>(none.error().code()), ec::not_found);
  EXPECT_NE(describe(none.error()).find("nope"), std::string::npos);
  auto no_id = d.operator_release("kv", id_b, at(100s));
  ASSERT_FALSE(no_id);
  EXPECT_EQ(static_cast<ec>(no_id.error().code()), ec::not_found);
  EXPECT_TRUE(registry.releases().empty());
}
