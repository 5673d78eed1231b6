// The release rules' decision over dockerd's view (decide_releases): which forgotten
// mount IDs go, for which reason, and which stay; the rules of a Mount over older counts
// and of berthctl release are in release_requests_test.cpp.

#include "actors/release_rules.hpp"

#include <gtest/gtest.h>

#include "core/errors.hpp"
#include "tests/actors/release_fixture.hpp"

using namespace berth;
using namespace berth::test;
using namespace std::chrono_literals;

// -- stale_instance ------------------------------------------------------------

TEST(release_rules, an_older_dockerds_id_is_released_when_its_container_does_not_run) {
  auto v = with_map(dockerd_now({ctr(ctr_c, container_state::exited)}), {{id_a, ctr_c}});
  auto out = decide({counted(id_a, 1, old_dockerd, 10s)}, v);
  ASSERT_TRUE(is_one(out, id_a, release_reason::stale_instance));
  EXPECT_EQ(out[0].count, 1u);
  EXPECT_EQ(out[0].container, ctr_c);
}

TEST(release_rules, live_restore_with_the_map_keeps_the_running_containers_id) {
  auto v = with_map(dockerd_now({ctr(ctr_c, container_state::running)}), {{id_a, ctr_c}});
  EXPECT_TRUE(decide({counted(id_a, 1, old_dockerd, 10s)}, v).empty());
}

TEST(release_rules, without_the_map_old_ids_go_only_when_no_running_container_mounts_the_volume) {
  // Live-restore: a running container mounts kv, so any old ID may be its.
  auto kept = dockerd_now({ctr(ctr_c, container_state::running)});
  EXPECT_TRUE(decide({counted(id_a, 1, old_dockerd, 10s)}, kept).empty());
  // A container running on another volume says nothing about kv.
  auto other = dockerd_now({ctr(ctr_c, container_state::running, {"other"}),
                            ctr(ctr_d, container_state::exited)});
  auto out = decide({counted(id_a, 2, old_dockerd, 10s)}, other);
  ASSERT_TRUE(is_one(out, id_a, release_reason::stale_instance));
  EXPECT_EQ(out[0].count, 2u);
  EXPECT_EQ(out[0].container, "");
}

TEST(release_rules, a_paused_or_restarting_container_counts_as_using_its_mounts) {
  for (auto state : {container_state::paused, container_state::restarting,
                     container_state::unknown}) {
    EXPECT_TRUE(decide({counted(id_a, 1, old_dockerd, 10s)}, dockerd_now({ctr(ctr_c, state)}))
                  .empty());
  }
}

TEST(release_rules, a_map_entry_for_another_id_leaves_this_one_to_the_per_volume_rule) {
  auto v = with_map(dockerd_now({ctr(ctr_c, container_state::running)}), {{id_b, ctr_d}});
  EXPECT_TRUE(decide({counted(id_a, 1, old_dockerd, 10s)}, v).empty());
  v.list->containers.front().state = container_state::exited;
  ASSERT_TRUE(is_one(decide({counted(id_a, 1, old_dockerd, 10s)}, v), id_a,
             release_reason::stale_instance));
}

// -- dockerd unknown -----------------------------------------------------------

TEST(release_rules, nothing_is_released_while_dockerd_is_unknown) {
  auto v = with_event(with_map(dockerd_now({}), {{id_a, ctr_c}}), container_event::destroy,
                      ctr_c, 500s);
  v.current.reset();
  EXPECT_TRUE(decide({counted(id_a, 1, old_dockerd, 10s), counted(id_b, 1, "", 10s)}, v)
                .empty());
}

TEST(release_rules, a_list_from_an_older_dockerd_says_nothing_about_what_runs_now) {
  auto v = dockerd_now({});
  v.list->instance = old_dockerd;
  EXPECT_TRUE(decide({counted(id_a, 1, old_dockerd, 10s)}, v).empty());
  v.list.reset();
  EXPECT_TRUE(decide({counted(id_a, 1, old_dockerd, 10s)}, v).empty());
}

// -- container_gone ------------------------------------------------------------

TEST(release_rules, a_destroy_event_releases_the_id_of_its_container) {
  auto v = with_event(with_map(dockerd_now({ctr(ctr_c, container_state::exited)}, 5s),
                               {{id_a, ctr_c}}),
                      container_event::destroy, ctr_c, 500s);
  auto out = decide({counted(id_a, 3, new_dockerd, 10s)}, v);
  ASSERT_TRUE(is_one(out, id_a, release_reason::container_gone));
  EXPECT_EQ(out[0].count, 3u);
  EXPECT_EQ(out[0].container, ctr_c);
}

TEST(release_rules, absence_from_a_list_taken_after_the_mount_releases_the_id) {
  auto v = with_map(dockerd_now({}, 1000s), {{id_a, ctr_c}});
  ASSERT_TRUE(is_one(decide({counted(id_a, 1, new_dockerd, 10s)}, v), id_a,
             release_reason::container_gone));
  // A list taken before the Mount may predate the container.
  EXPECT_TRUE(decide({counted(id_a, 1, new_dockerd, 1000s)}, v).empty());
  EXPECT_TRUE(decide({counted(id_a, 1, new_dockerd, 1001s)}, v).empty());
}

TEST(release_rules, without_the_map_a_current_id_goes_when_no_container_mounts_the_volume) {
  auto none = dockerd_now({ctr(ctr_c, container_state::exited, {"other"})}, 1000s);
  auto out = decide({counted(id_a, 1, new_dockerd, 10s)}, none);
  ASSERT_TRUE(is_one(out, id_a, release_reason::container_gone));
  EXPECT_EQ(out[0].container, "");
  // The list must be newer than the Mount.
  EXPECT_TRUE(decide({counted(id_a, 1, new_dockerd, 1000s)}, none).empty());
  // A stopped container still mounting kv keeps it (a docker cp into it, say).
  auto stopped = dockerd_now({ctr(ctr_c, container_state::exited)}, 1000s);
  EXPECT_TRUE(decide({counted(id_a, 1, new_dockerd, 10s)}, stopped).empty());
  // ... unless it was destroyed since.
  ASSERT_TRUE(is_one(decide({counted(id_a, 1, new_dockerd, 10s)},
                    with_event(stopped, container_event::destroy, ctr_c, 1500s)),
             id_a, release_reason::container_gone));
}

// -- died ----------------------------------------------------------------------

TEST(release_rules, a_die_without_unmount_releases_exactly_at_the_grace_period_not_before) {
  struct row {
    std::chrono::milliseconds now;
    std::chrono::milliseconds grace;
    bool released;
  };
  const row rows[] = {
    {110s, default_die_grace, true},         // exactly at the bound
    {109'999ms, default_die_grace, false},   // just before it
    {100s, default_die_grace, false},        // at the die
    {500s, default_die_grace, true},
    {110s, 30s, false},                      // the grace is a parameter
    {130s, 30s, true},
  };
  auto v = with_event(with_map(dockerd_now({ctr(ctr_c, container_state::exited)}, 5s),
                               {{id_a, ctr_c}}),
                      container_event::die, ctr_c, 100s);
  for (const auto& r : rows) {
    auto out = decide({counted(id_a, 1, new_dockerd, 50s)}, v, r.now, r.grace);
    if (r.released) {
      ASSERT_TRUE(is_one(out, id_a, release_reason::died));
      EXPECT_EQ(out[0].container, ctr_c);
    } else {
      EXPECT_TRUE(out.empty()) << "now " << r.now.count() << " ms, grace " << r.grace.count();
    }
  }
}

TEST(release_rules, a_docker_cp_mounted_after_the_die_is_never_taken) {
  // docker cp into the stopped container mounts fresh IDs after its die;
  // config.v2.json never names them, but here even a map that did is ignored.
  auto v = with_event(with_map(dockerd_now({ctr(ctr_c, container_state::exited)}, 5s),
                               {{id_a, ctr_c}, {id_b, ctr_c}}),
                      container_event::die, ctr_c, 100s);
  auto ids = std::vector<mount_id_state>{counted(id_a, 1, new_dockerd, 50s),
                                         counted(id_b, 1, new_dockerd, 101s)};
  ASSERT_TRUE(is_one(decide(ids, v, 5000s), id_a, release_reason::died));
  // A Mount at the instant of the die counts as after it.
  EXPECT_TRUE(decide({counted(id_b, 1, new_dockerd, 100s)}, v, 5000s).empty());
  // Not in the map: the same.
  v.container_of->erase(id_b);
  ASSERT_TRUE(is_one(decide(ids, v, 5000s), id_a, release_reason::died));
}

TEST(release_rules, a_container_running_now_keeps_its_id_after_an_earlier_die) {
  // Died at 100, listed running at 150 (restarted): the list wins.
  auto v = with_event(with_map(dockerd_now({ctr(ctr_c, container_state::running)}, 150s),
                               {{id_a, ctr_c}}),
                      container_event::die, ctr_c, 100s);
  EXPECT_TRUE(decide({counted(id_a, 1, new_dockerd, 50s)}, v, 5000s).empty());
  // A die after the list overrides the listed "running".
  auto later = with_event(with_map(dockerd_now({ctr(ctr_c, container_state::running)}, 60s),
                                   {{id_a, ctr_c}}),
                          container_event::die, ctr_c, 100s);
  ASSERT_TRUE(is_one(decide({counted(id_a, 1, new_dockerd, 50s)}, later, 5000s), id_a,
             release_reason::died));
}

TEST(release_rules, without_the_map_a_die_releases_only_for_the_one_container_on_the_volume) {
  auto one = with_event(dockerd_now({ctr(ctr_c, container_state::exited)}, 200s),
                        container_event::die, ctr_c, 100s);
  auto out = decide({counted(id_a, 1, new_dockerd, 50s)}, one, 5000s);
  ASSERT_TRUE(is_one(out, id_a, release_reason::died));
  EXPECT_EQ(out[0].container, ctr_c);
  // Before the grace period: kept.
  EXPECT_TRUE(decide({counted(id_a, 1, new_dockerd, 50s)}, one, 105s).empty());
  // Two containers on kv: the ID may be a docker cp into the other, still copying.
  auto two = with_event(dockerd_now({ctr(ctr_c, container_state::exited),
                                     ctr(ctr_d, container_state::exited)}, 200s),
                        container_event::die, ctr_c, 100s);
  EXPECT_TRUE(decide({counted(id_a, 1, new_dockerd, 50s)}, two, 5000s).empty());
  // The list must be newer than the Mount, or another container may have come since.
  auto stale_list = with_event(dockerd_now({ctr(ctr_c, container_state::exited)}, 40s),
                               container_event::die, ctr_c, 100s);
  EXPECT_TRUE(decide({counted(id_a, 1, new_dockerd, 50s)}, stale_list, 5000s).empty());
}

// -- another dockerd that still runs ----------------------------------------------

TEST(release_rules, an_id_made_by_another_live_dockerd_is_never_released_automatically) {
  // --docker-api names dockerd 5151, but dockerd 7777 (still running) made this count:
  // 5151's list and events say nothing about 7777's containers.
  const dockerd_key other = "7777@3000";
  auto v = dockerd_now({}, 1000s); // no container mounts kv per 5151
  v.alive = {other};
  EXPECT_TRUE(decide({counted(id_a, 1, other, 10s)}, v, 1'000'000s).empty());
  auto mapped = with_event(with_map(v, {{id_a, ctr_c}}), container_event::die, ctr_c, 100s);
  EXPECT_TRUE(decide({counted(id_a, 1, other, 10s)}, mapped, 1'000'000s).empty());
  // The same count once that dockerd is gone (not alive): stale.
  v.alive.clear();
  ASSERT_TRUE(is_one(decide({counted(id_a, 1, other, 10s)}, v), id_a,
                     release_reason::stale_instance));
}

TEST(release_rules, the_alive_set_spares_only_the_instances_it_names) {
  const dockerd_key other = "7777@3000";
  auto v = dockerd_now({}, 1000s);
  v.alive = {other};
  auto out = decide({counted(id_a, 1, other, 10s), counted(id_b, 1, old_dockerd, 10s)}, v);
  ASSERT_TRUE(is_one(out, id_b, release_reason::stale_instance));
  // The current dockerd in the set changes nothing: its IDs follow the usual rules.
  v.alive.insert(new_dockerd);
  ASSERT_TRUE(is_one(decide({counted(id_a, 1, new_dockerd, 10s)}, v), id_a,
                     release_reason::container_gone));
}

// -- IDs that name no container ------------------------------------------------

TEST(release_rules, an_id_naming_no_container_is_never_released_automatically) {
  // ECS's (or another caller's) ID: no dockerd instance, not in the map.
  auto ecs = counted("ecs-task-7/data", 1, "", 10s);
  auto empty = dockerd_now({}, 1000s);
  EXPECT_TRUE(decide({ecs}, empty, 1'000'000s).empty());
  EXPECT_TRUE(decide({ecs}, with_map(empty, {{id_a, ctr_c}}), 1'000'000s).empty());
  auto died = with_event(with_event(dockerd_now({ctr(ctr_c, container_state::exited)}, 1000s),
                                    container_event::die, ctr_c, 100s),
                         container_event::destroy, ctr_c, 200s);
  EXPECT_TRUE(decide({ecs}, died, 1'000'000s).empty());
  // The same ID beside a stale dockerd one: only the dockerd one goes.
  ASSERT_TRUE(is_one(decide({ecs, counted(id_a, 1, old_dockerd, 10s)}, empty), id_a,
             release_reason::stale_instance));
}

TEST(release_rules, an_id_of_older_state_that_the_map_names_follows_its_container) {
  // Counted before berth recorded instances, but config.v2.json ties it.
  auto v = with_event(with_map(dockerd_now({}, 5s), {{id_a, ctr_c}}), container_event::destroy,
                      ctr_c, 500s);
  ASSERT_TRUE(is_one(decide({counted(id_a, 1, "", 10s)}, v), id_a, release_reason::container_gone));
}

TEST(release_rules, an_id_with_no_count_is_not_released) {
  EXPECT_TRUE(decide({counted(id_a, 0, old_dockerd, 10s)}, dockerd_now({})).empty());
}

// -- the log sentence ----------------------------------------------------------

TEST(release_rules, each_release_logs_volume_id_reason_and_count) {
  auto v = with_map(dockerd_now({ctr(ctr_c, container_state::exited)}), {{id_a, ctr_c}});
  auto out = decide({counted(id_a, 4, old_dockerd, 10s)}, v);
  ASSERT_EQ(out.size(), 1u);
  const auto& log = out[0].log;
  EXPECT_NE(log.find("volume kv "), std::string::npos) << log;
  EXPECT_NE(log.find(id_a.substr(0, 12)), std::string::npos) << log;
  EXPECT_NE(log.find("reason stale_instance"), std::string::npos) << log;
  EXPECT_NE(log.find("count 4 dropped"), std::string::npos) << log;
  EXPECT_NE(log.find(ctr_c.substr(0, 12)), std::string::npos) << log;
}

TEST(release_rules, reasons_are_the_metric_labels) {
  EXPECT_STREQ(to_string(release_reason::stale_instance), "stale_instance");
  EXPECT_STREQ(to_string(release_reason::container_gone), "container_gone");
  EXPECT_STREQ(to_string(release_reason::died), "died");
  EXPECT_STREQ(to_string(release_reason::operator_request), "operator");
}

TEST(release_rules, container_states_parse_as_docker_spells_them) {
  EXPECT_EQ(parse_container_state("running"), container_state::running);
  EXPECT_EQ(parse_container_state("exited"), container_state::exited);
  EXPECT_EQ(parse_container_state("paused"), container_state::paused);
  EXPECT_EQ(parse_container_state("Running"), container_state::unknown);
  EXPECT_TRUE(uses_its_mounts(container_state::unknown));
  EXPECT_FALSE(uses_its_mounts(container_state::created));
  EXPECT_FALSE(uses_its_mounts(container_state::dead));
}
