#include "persistence/ecs_import.hpp"

#include <gtest/gtest.h>

#include "core/errors.hpp"
#include "temp_dir.hpp"

namespace berth {
namespace {

using test::temp_dir;
using test::write_text;

// The shape amazon-ecs-volume-plugin writes (mounts: null per task ID, or a count).
const char* ecs_state = R"({"volumes":{
  "efs-data":{"type":"efs","path":"/var/lib/ecs/volumes/efs-data",
              "options":{"type":"nfs4","device":"fs-1234:/","o":"tls,iam"},
              "createdAt":"2023-06-01T12:00:00Z",
              "mounts":{"task-a":null,"task-b":2,"task-c":0}},
  "efs-typeless":{"type":"efs","path":"/var/lib/ecs/volumes/efs-typeless",
              "options":{"device":"fs-5678:/"},"createdAt":"2023-06-02T12:00:00Z",
              "mounts":{}},
  "scratch":{"type":"","path":"/var/lib/ecs/volumes/scratch","options":{},
             "createdAt":"2023-06-03T12:00:00Z","mounts":{"task-d":null}}
}})";

TEST(ecs_import, maps_the_plugin_state) {
  temp_dir tmp;
  write_text(tmp / "ecs.json", ecs_state);
  auto state = import_ecs_state(tmp / "ecs.json");
  ASSERT_TRUE(state) << describe(state.error());
  EXPECT_TRUE(state->imported);
  EXPECT_TRUE(state->boot_id.empty());
  ASSERT_EQ(state->volumes.size(), 3u);

  const auto& efs = state->volumes.at("efs-data");
  EXPECT_EQ(efs.name, "efs-data");
  EXPECT_EQ(efs.backend, "local");
  EXPECT_EQ(efs.options, (option_map{{"type", "nfs4"}, {"device", "fs-1234:/"},
                                     {"o", "tls,iam"}}));
  EXPECT_EQ(efs.created_at, "2023-06-01T12:00:00Z");
  EXPECT_EQ(efs.mounts, (mount_counts{{"task-a", 1}, {"task-b", 2}, {"task-c", 1}}));
  EXPECT_TRUE(efs.mounted);
  EXPECT_EQ(efs.mountpoint, "/var/lib/ecs/volumes/efs-data");
  // ECS's IDs name no dockerd instance berth saw: no origins, never released automatically.
  EXPECT_TRUE(efs.origins.empty());

  const auto& typeless = state->volumes.at("efs-typeless");
  EXPECT_EQ(typeless.options.at("type"), "efs");
  EXPECT_EQ(typeless.options.at("device"), "fs-5678:/");
  EXPECT_FALSE(typeless.mounted);
  EXPECT_TRUE(typeless.mounts.empty());
  EXPECT_EQ(typeless.mountpoint, "/var/lib/ecs/volumes/efs-typeless");

  const auto& scratch = state->volumes.at("scratch");
  EXPECT_EQ(scratch.options.count("type"), 0u);
  EXPECT_EQ(scratch.mounts, (mount_counts{{"task-d", 1}}));
  EXPECT_TRUE(scratch.mounted);
}

TEST(ecs_import, empty_or_null_volumes_import_nothing) {
  temp_dir tmp;
  write_text(tmp / "a.json", R"({"volumes":{}})");
  write_text(tmp / "b.json", R"({"volumes":null})");
  for (auto file : {"a.json", "b.json"}) {
    auto state = import_ecs_state(tmp / file);
    ASSERT_TRUE(state) << describe(state.error());
    EXPECT_TRUE(state->volumes.empty());
    EXPECT_TRUE(state->imported);
  }
}

TEST(ecs_import, malformed_json_is_a_clear_error) {
  temp_dir tmp;
  auto path = tmp / "ecs.json";
  write_text(path, R"({"volumes":{"v1":{"type":"efs",)");
  auto state = import_ecs_state(path);
  ASSERT_FALSE(state);
  EXPECT_EQ(state.error(), ec::invalid_argument);
  auto msg = describe(state.error());
  EXPECT_NE(msg.find(path), std::string::npos) << msg;
  EXPECT_NE(msg.find("malformed JSON"), std::string::npos) << msg;
}

TEST(ecs_import, wrong_shapes_are_errors_naming_the_problem) {
  temp_dir tmp;
  struct bad_case {
    const char* json;
    const char* expected;
  };
  for (auto c : {bad_case{R"([1,2])", "not a JSON object"},
                 bad_case{R"({"vols":{}})", "\"volumes\""},
                 bad_case{R"({"volumes":{"../etc":{}}})", "../etc"},
                 bad_case{R"({"volumes":{"v1":[]}})", "v1"},
                 bad_case{R"({"volumes":{"v1":{"mounts":{"t":"x"}}}})", "mount ID t"},
                 bad_case{R"({"volumes":{"v1":{"options":{"o":1}}}})", "option \"o\""}}) {
    write_text(tmp / "ecs.json", c.json);
    auto state = import_ecs_state(tmp / "ecs.json");
    ASSERT_FALSE(state) << c.json;
    EXPECT_NE(describe(state.error()).find(c.expected), std::string::npos)
      << c.json << " -> " << describe(state.error());
  }
}

TEST(ecs_import, missing_file_names_the_path) {
  auto state = import_ecs_state("/nonexistent/ecs-state.json");
  ASSERT_FALSE(state);
  EXPECT_NE(describe(state.error()).find("/nonexistent/ecs-state.json"), std::string::npos);
}

} // namespace
} // namespace berth
