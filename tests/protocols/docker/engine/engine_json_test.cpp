#include "protocols/docker/engine/engine_json.hpp"

#include <fstream>
#include <sstream>

#include <gtest/gtest.h>

#include "core/errors.hpp"

using namespace berth;
using namespace berth::docker_engine;

namespace {

/// A file of tests/docker_engine/data (answers captured from dockerd 20.10.24; see README.md).
std::string data(const std::string& name) {
  std::ifstream in{std::string{BERTH_DOCKER_ENGINE_DATA} + "/" + name};
  EXPECT_TRUE(in) << "missing test data " << name;
  std::ostringstream out;
  out << in.rdbuf();
  return out.str();
}

} // namespace

TEST(docker_engine_json, info_of_dockerd_20_10) {
  auto info = parse_info(data("info_20.10.json"));
  ASSERT_TRUE(info) << describe(info.error());
  EXPECT_EQ(info->id, "JXZP:TPTO:HTD3:5M6P:EOTP:LXDP:DXNL:CDOU:T4F6:ZPJ4:I32Y:MMNA");
  EXPECT_EQ(info->root_dir, "/tmp/berth-cap.SxWGPA/d/data");
  EXPECT_EQ(info->server_version, "20.10.24+dfsg1");
  EXPECT_EQ(info->system_time, "2026-12-01T14:22:25.104565526Z");
  EXPECT_FALSE(info->instance.known());
}

TEST(docker_engine_json, info_without_id_or_not_json_is_refused) {
  auto none = parse_info(R"({"ServerVersion":"20.10.24"})");
  ASSERT_FALSE(none);
  EXPECT_EQ(none.error(), ec::unavailable);
  EXPECT_NE(describe(none.error()).find("no ID"), std::string::npos);
  auto html = parse_info("<html>502 Bad Gateway</html>");
  ASSERT_FALSE(html);
  EXPECT_NE(describe(html.error()).find("/info"), std::string::npos);
  EXPECT_FALSE(parse_info("[]"));
}

TEST(docker_engine_json, containers_of_dockerd_20_10_keep_only_volume_mounts) {
  auto list = parse_containers(data("containers_20.10.json"));
  ASSERT_TRUE(list) << describe(list.error());
  ASSERT_EQ(list->items.size(), 2u);
  const auto& created = list->items[0];
  EXPECT_EQ(created.id, "2aae2f8a757f9f4b88af52002f6e13253f93d90827ceeb52f8d1a406ba5eacb6");
  EXPECT_EQ(created.names, std::vector<std::string>{"/c2"});
  EXPECT_EQ(created.state, "created");
  EXPECT_FALSE(created.holds_mounts());
  EXPECT_TRUE(created.volumes.empty());
  const auto& running = list->items[1];
  EXPECT_EQ(running.id, "d7a94427ad86a7ff4b0ebf366df283e6dd582c3f7d6484ebbe04f76b5117e317");
  EXPECT_EQ(running.state, "running");
  EXPECT_TRUE(running.holds_mounts());
  // The bind mount of /tmp is left out: only Type "volume".
  ASSERT_EQ(running.volumes.size(), 1u);
  EXPECT_EQ(running.volumes[0].name, "plain1");
  EXPECT_EQ(running.volumes[0].driver, "local");
  EXPECT_EQ(running.volumes[0].destination, "/data");
}

TEST(docker_engine_json, containers_edge_shapes) {
  auto empty = parse_containers("[]");
  ASSERT_TRUE(empty);
  EXPECT_TRUE(empty->items.empty());
  auto null_mounts = parse_containers(R"([{"Id":"abc","Names":null,"State":"exited","Mounts":null}])");
  ASSERT_TRUE(null_mounts) << describe(null_mounts.error());
  EXPECT_EQ(null_mounts->items[0].state, "exited");
  EXPECT_TRUE(null_mounts->items[0].volumes.empty());
  EXPECT_FALSE(parse_containers(R"([{"Names":["/x"]}])")); // no Id
  EXPECT_FALSE(parse_containers(R"({"message":"page not found"})"));
}

TEST(docker_engine_json, events_of_dockerd_20_10) {
  std::istringstream lines{data("events_20.10.jsonl")};
  std::vector<container_event> events;
  std::string line;
  while (std::getline(lines, line)) {
    auto ev = parse_event(line);
    ASSERT_TRUE(ev) << describe(ev.error());
    events.push_back(*ev);
  }
  ASSERT_EQ(events.size(), 7u);
  std::vector<std::string> actions;
  for (const auto& ev : events) {
    actions.push_back(ev.action);
  }
  EXPECT_EQ(actions, (std::vector<std::string>{"create", "attach", "start", "die", "destroy", "kill", "die"}));
  const std::string c3 = "aa6a9c4f2f8a62ac93c44c110ee6d2c57667967609aab4a76dd1049c6044097a";
  EXPECT_EQ(events[3].container_id, c3);
  EXPECT_EQ(events[3].exit_code, 3);
  EXPECT_EQ(events[3].time_nano, 1796134946207579576);
  EXPECT_EQ(events[2].exit_code, -1); // start carries none
  EXPECT_EQ(events[4].action, "destroy");
  EXPECT_EQ(events[6].exit_code, 137);
  EXPECT_EQ(events[6].container_id, "d7a94427ad86a7ff4b0ebf366df283e6dd582c3f7d6484ebbe04f76b5117e317");
}

TEST(docker_engine_json, event_fallbacks_and_refusals) {
  // Before API 1.22 only status/id/time existed: still read.
  auto old = parse_event(R"({"status":"die","id":"abc","time":17})");
  ASSERT_TRUE(old) << describe(old.error());
  EXPECT_EQ(old->action, "die");
  EXPECT_EQ(old->container_id, "abc");
  EXPECT_EQ(old->time_nano, 17000000000);
  // Found by the event_stream fuzz target: seconds past what nanoseconds hold overflowed.
  auto far = parse_event(R"({"status":"die","id":"abc","time":1796134945825033899})");
  ASSERT_TRUE(far) << describe(far.error());
  EXPECT_EQ(far->time_nano, 0) << "a time that does not fit is no time, not a wrapped one";
  auto before_1970 = parse_event(R"({"status":"die","id":"abc","time":-5})");
  ASSERT_TRUE(before_1970);
  EXPECT_EQ(before_1970->time_nano, 0);
  auto odd_code = parse_event(R"({"Action":"die","Actor":{"ID":"a","Attributes":{"exitCode":"x"}}})");
  ASSERT_TRUE(odd_code);
  EXPECT_EQ(odd_code->exit_code, -1);
  EXPECT_FALSE(parse_event(R"({"Type":"container"})"));
  EXPECT_FALSE(parse_event("{"));
}

TEST(docker_engine_json, error_message) {
  EXPECT_EQ(parse_error_message(R"({"message":"client version 1.99 is too new"})"),
            "client version 1.99 is too new");
  EXPECT_EQ(parse_error_message("404 page not found"), "");
}
