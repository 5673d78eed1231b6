// The engine view: which dockerd answers, the list, the bounded event window; the mount-ID
// map from config.v2.json; whether a recorded dockerd still runs.

#include "protocols/docker/sync/engine_view_keeper.hpp"

#include <filesystem>
#include <fstream>

#include <unistd.h>

#include <gtest/gtest.h>

#include "core/errors.hpp"
#include "core/limits.hpp"
#include "protocols/docker/sync/dockerd_alive.hpp"
#include "protocols/docker/sync/mount_map.hpp"
#include "tests/persistence/temp_dir.hpp"
#include "tests/protocols/docker/sync/fake_engine.hpp"

using namespace berth;
using namespace berth::docker_sync;
using namespace std::chrono_literals;

namespace {

const release_clock::time_point epoch{std::chrono::seconds(1'800'000'000)};

int64_t nano_at(release_clock::duration t) {
  return std::chrono::duration_cast<std::chrono::nanoseconds>((epoch + t).time_since_epoch())
    .count();
}

/// Writes `text` at `rel` under `dir`, making the directories on the way.
void write_under(const test::temp_dir& dir, const std::string& rel, const std::string& text) {
  std::filesystem::create_directories((std::filesystem::path{dir.path()} / rel).parent_path());
  test::write_text(dir / rel, text);
}

engine_view_keeper keeper_on(std::shared_ptr<test::fake_engine> engine,
                             std::shared_ptr<telemetry> stats = nullptr) {
  return engine_view_keeper{engine, std::move(stats), [](const std::string&) {
                              return caf::expected<mount_map>{mount_map{}};
                            }};
}

} // namespace

TEST(engine_view_keeper, the_current_dockerd_is_the_one_that_answered_the_list) {
  auto engine = std::make_shared<test::fake_engine>();
  engine->set_running("c1", "running");
  auto stats = std::make_shared<telemetry>(std::vector<std::string>{"local"});
  auto k = keeper_on(engine, stats);
  ASSERT_FALSE(k.refresh(epoch + 1s));
  ASSERT_TRUE(k.view().current);
  EXPECT_EQ(*k.view().current, "4242@1000");
  ASSERT_TRUE(k.view().list);
  EXPECT_EQ(k.view().list->instance, "4242@1000");
  EXPECT_EQ(k.view().list->taken_at, epoch + 1s);
  ASSERT_EQ(k.view().list->containers.size(), 1u);
  EXPECT_EQ(k.view().list->containers[0].state, container_state::running);
  EXPECT_EQ(k.view().list->containers[0].volumes, std::vector<std::string>{"kv"});
  EXPECT_TRUE(k.view().container_of);
  EXPECT_TRUE(k.take_new_instance());
  EXPECT_FALSE(k.take_new_instance());
  EXPECT_EQ(stats->docker_engine_up.value(), 1);
  engine->set_up(false);
  EXPECT_TRUE(k.refresh(epoch + 2s));
  EXPECT_FALSE(k.view().current) << "down: nothing is released";
  EXPECT_EQ(stats->docker_engine_up.value(), 0);
}

TEST(engine_view_keeper, a_peer_that_is_not_dockerd_identifies_no_instance) {
  // Socket activation where berth could not find dockerd behind systemd.
  EXPECT_FALSE(key_of({1, 50, "systemd"}));
  EXPECT_FALSE(key_of({0, 0, ""}));
  EXPECT_EQ(key_of({4242, 1000, "dockerd"}), std::optional<dockerd_key>{"4242@1000"});
  auto engine = std::make_shared<test::fake_engine>();
  engine->set_instance({1, 50, "systemd"});
  auto k = keeper_on(engine);
  test::captured_log log;
  ASSERT_FALSE(k.refresh(epoch));
  ASSERT_FALSE(k.refresh(epoch + 1s));
  EXPECT_FALSE(k.view().current);
  EXPECT_EQ(log.count("cannot tell which dockerd answers"), 1) << log.out.str();
}

TEST(engine_view_keeper, only_die_and_destroy_are_kept_within_a_bounded_window) {
  auto k = keeper_on(std::make_shared<test::fake_engine>());
  auto now = epoch + 1h;
  EXPECT_FALSE(k.add_event({"start", "c1", -1, nano_at(1h)}, now));
  EXPECT_TRUE(k.add_event({"die", "c1", 137, nano_at(1h)}, now));
  EXPECT_TRUE(k.add_event({"destroy", "c1", -1, nano_at(1h)}, now));
  ASSERT_EQ(k.view().events.size(), 2u);
  EXPECT_EQ(k.view().events[0].kind, container_event::die);
  EXPECT_EQ(k.view().events[0].at, epoch + 1h);
  // Past the window the old ones go.
  auto later = now + limits::docker_event_window + 1s;
  EXPECT_TRUE(k.add_event({"die", "c2", 0, nano_at(1h + limits::docker_event_window + 1s)}, later));
  ASSERT_EQ(k.view().events.size(), 1u);
  EXPECT_EQ(k.view().events[0].container_id, "c2");
  // At most max_docker_events_kept: the oldest go first.
  for (size_t i = 0; i < limits::max_docker_events_kept + 5; ++i) {
    k.add_event({"destroy", "d" + std::to_string(i), -1, nano_at(2h) + static_cast<int64_t>(i)},
                later + 1s);
  }
  EXPECT_EQ(k.view().events.size(), limits::max_docker_events_kept);
  EXPECT_EQ(k.view().events.back().container_id,
            "d" + std::to_string(limits::max_docker_events_kept + 4));
}

TEST(engine_view_keeper, a_tie_outlives_its_config_and_a_fresh_read_wins) {
  auto engine = std::make_shared<test::fake_engine>();
  mount_map on_disk{{"m1", "c1"}, {"m2", "c2"}};
  engine_view_keeper k{engine, nullptr,
                       [&](const std::string&) { return caf::expected<mount_map>{on_disk}; }};
  ASSERT_FALSE(k.refresh(epoch));
  on_disk = {{"m2", "c2"}, {"m3", "c3"}}; // c1 removed
  ASSERT_FALSE(k.refresh(epoch + 1s));
  ASSERT_TRUE(k.view().container_of);
  EXPECT_EQ(*k.view().container_of, (mount_map{{"m1", "c1"}, {"m2", "c2"}, {"m3", "c3"}}));
  on_disk = {};
  ASSERT_FALSE(k.refresh(epoch + 2s));
  EXPECT_EQ(k.view().container_of->size(), 3u);
}

TEST(mount_map, config_v2_json_ties_mount_ids_to_their_container) {
  mount_map m;
  ASSERT_FALSE(add_config_mount_ids(
    R"({"ID":"cid1","State":{"Running":false},"MountPoints":{
         "/data":{"Name":"kv","Driver":"berth","Type":"volume","ID":"mid-a"},
         "/logs":{"Name":"lv","Driver":"berth","Type":"volume","ID":""},
         "/etc/x":{"Source":"/etc/x","Type":"bind"}}})",
    "dir-name", m));
  EXPECT_EQ(m, (mount_map{{"mid-a", "cid1"}}));
  EXPECT_TRUE(add_config_mount_ids("not json", "c", m));
}

TEST(mount_map, reads_every_container_directory_and_skips_what_it_cannot) {
  test::temp_dir root;
  write_under(root, "containers/c1/config.v2.json", R"({"ID":"c1","MountPoints":{"/d":{"ID":"m1"}}})");
  write_under(root, "containers/c2/config.v2.json", R"({"MountPoints":{"/d":{"ID":"m2"}}})");
  write_under(root, "containers/c3/config.v2.json", "{torn");
  std::filesystem::create_directories(root.path() + "/containers/c4"); // no config yet
  auto m = read_mount_map(root.path());
  ASSERT_TRUE(m) << describe(m.error());
  EXPECT_EQ(*m, (mount_map{{"m1", "c1"}, {"m2", "c2"}}));
  auto none = read_mount_map(root.path() + "/absent");
  ASSERT_FALSE(none);
  EXPECT_NE(describe(none.error()).find(root.path() + "/absent/containers"), std::string::npos)
    << describe(none.error());
}

TEST(dockerd_alive, a_recorded_dockerd_runs_while_its_pid_has_that_start_time) {
  test::temp_dir proc;
  std::string stat = "77 (dockerd) S 1 77 77 0 -1 4194560 1 0 0 0 0 0 0 0 20 0 9 0 3000 1 1";
  write_under(proc, "77/stat", stat);
  EXPECT_TRUE(dockerd_alive("77@3000", proc.path()));
  EXPECT_FALSE(dockerd_alive("77@2999", proc.path())) << "a later process reused the pid";
  EXPECT_FALSE(dockerd_alive("78@3000", proc.path())) << "no such process";
  for (const char* bad : {"", "77", "@3000", "77@", "x@1", "../77@3000"}) {
    EXPECT_FALSE(dockerd_alive(bad, proc.path())) << bad;
  }
  // This process, on the real /proc.
  std::ifstream in{"/proc/self/stat"};
  std::string line;
  std::getline(in, line);
  auto ticks = docker_engine::parse_stat_start_ticks(line);
  ASSERT_TRUE(ticks);
  EXPECT_TRUE(dockerd_alive(make_dockerd_key(::getpid(), *ticks)));
}
