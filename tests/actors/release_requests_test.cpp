// The release rules of requests from outside (actors/release_rules): a Mount over an older
// dockerd's counts (count_mount) and the operator's berthctl release
// (check_operator_release).

#include "actors/release_rules.hpp"

#include <gtest/gtest.h>

#include "core/errors.hpp"
#include "tests/actors/release_fixture.hpp"

using namespace berth;
using namespace berth::test;
using namespace std::chrono_literals;

// -- a Mount over an older dockerd's counts ------------------------------------

TEST(release_rules, a_mount_replaces_an_older_dockerds_counts_and_adds_otherwise) {
  struct row {
    const char* what;
    std::optional<mount_id_state> before;
    dockerd_key mounter;
    uint32_t count;
    dockerd_key tag;
    uint32_t replaced;
  };
  const row rows[] = {
    {"new ID", std::nullopt, new_dockerd, 1, new_dockerd, 0},
    {"same dockerd adds", counted(id_a, 2, new_dockerd, 10s), new_dockerd, 3, new_dockerd, 0},
    {"restart policy: older dockerd's counts replaced", counted(id_a, 2, old_dockerd, 10s),
     new_dockerd, 1, new_dockerd, 2},
    {"unidentified caller over dockerd adds", counted(id_a, 1, new_dockerd, 10s), "", 2, "", 0},
    {"dockerd over unidentified counts adds", counted(id_a, 1, "", 10s), new_dockerd, 2, "", 0},
    {"unidentified adds", counted(id_a, 1, "", 10s), "", 2, "", 0},
  };
  for (const auto& r : rows) {
    auto got = count_mount(r.before, id_a, r.mounter, at(3000s));
    EXPECT_EQ(got.next.count, r.count) << r.what;
    EXPECT_EQ(got.next.instance, r.tag) << r.what;
    EXPECT_EQ(got.replaced, r.replaced) << r.what;
    EXPECT_EQ(got.next.id, id_a) << r.what;
    EXPECT_EQ(got.next.last_mounted, at(3000s)) << r.what;
  }
}

// -- berthctl release ----------------------------------------------------------

TEST(release_rules, an_operator_release_of_an_uncounted_id_is_not_found) {
  auto got = check_operator_release("kv", {counted(id_a, 1, new_dockerd, 10s)}, id_b,
                                    dockerd_now({}));
  ASSERT_FALSE(got);
  EXPECT_EQ(got.error().code(), static_cast<uint8_t>(ec::not_found));
  EXPECT_NE(describe(got.error()).find(id_b), std::string::npos);
}

TEST(release_rules, an_operator_release_is_refused_naming_the_running_container) {
  auto ids = std::vector<mount_id_state>{counted(id_a, 1, new_dockerd, 10s)};
  auto v = with_map(dockerd_now({ctr(ctr_c, container_state::running)}), {{id_a, ctr_c}});
  auto got = check_operator_release("kv", ids, id_a, v);
  ASSERT_FALSE(got);
  EXPECT_EQ(got.error().code(), static_cast<uint8_t>(ec::in_use));
  EXPECT_NE(describe(got.error()).find(ctr_c.substr(0, 12)), std::string::npos);
  // Stopped: allowed, as the operator's reason.
  v.list->containers.front().state = container_state::exited;
  auto ok = check_operator_release("kv", ids, id_a, v);
  ASSERT_TRUE(ok);
  EXPECT_EQ(ok->reason, release_reason::operator_request);
  EXPECT_EQ(ok->count, 1u);
  EXPECT_EQ(ok->container, ctr_c);
}

TEST(release_rules, without_the_map_operator_release_is_refused_while_a_container_on_kv_runs) {
  // The ECS ID too: berth cannot tell the running container does not hold it.
  auto ids = std::vector<mount_id_state>{counted("ecs-task-7/data", 1, "", 10s)};
  auto v = dockerd_now({ctr(ctr_c, container_state::running), ctr(ctr_d, container_state::exited)});
  auto got = check_operator_release("kv", ids, "ecs-task-7/data", v);
  ASSERT_FALSE(got);
  EXPECT_EQ(got.error().code(), static_cast<uint8_t>(ec::in_use));
  EXPECT_NE(describe(got.error()).find(ctr_c.substr(0, 12)), std::string::npos);
  EXPECT_EQ(describe(got.error()).find(ctr_d.substr(0, 12)), std::string::npos);
  v.list->containers.front().volumes = {"other"};
  auto ok = check_operator_release("kv", ids, "ecs-task-7/data", v);
  ASSERT_TRUE(ok);
  EXPECT_NE(ok->log.find("reason operator"), std::string::npos) << ok->log;
}

TEST(release_rules, an_operator_release_with_dockerd_down_is_allowed_and_says_unchecked) {
  auto v = dockerd_now({ctr(ctr_c, container_state::running)});
  v.current.reset();
  auto ok = check_operator_release("kv", {counted(id_a, 1, old_dockerd, 10s)}, id_a, v);
  ASSERT_TRUE(ok);
  EXPECT_NE(ok->log.find("not checked"), std::string::npos) << ok->log;
}
