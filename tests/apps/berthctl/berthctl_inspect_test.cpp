#include "apps/berthctl/berthctl_inspect.hpp"

#include <gtest/gtest.h>

#include "apps/berthctl/berthctl_cli.hpp"
#include "core/errors.hpp"
#include "core/record_json.hpp"

using namespace berth;
using namespace berth::cli;

namespace {

/// A record as the admin API sends it once berthd tags mount IDs with their origins:
/// one ID made by a dockerd, one by a caller berth could not identify (ECS), and an
/// origin for an ID that is no longer counted.
const char* tagged_record = R"({
  "name": "kv", "backend": "local", "options": {}, "created_at": "2026-12-01T10:00:00Z",
  "mounts": {"c89a0f0e1d2c3b4a5968": 2, "ecs-task-1": 1, "0000untagged": 1},
  "mount_origins": {
    "c89a0f0e1d2c3b4a5968": {"dockerd": "4242@981273", "last_mounted_ms": 1764601445123},
    "ecs-task-1": {"dockerd": "", "last_mounted_ms": 1764601200000},
    "gone": {"dockerd": "1@2", "last_mounted_ms": 5}
  },
  "mounted": true, "mountpoint": "/var/lib/berth/volumes/kv/mnt"
})";

volume_record read(const std::string& json) {
  auto rec = record_from_json(json);
  EXPECT_TRUE(rec) << describe(rec.error());
  if (!rec) {
    return {};
  }
  return *rec;
}

} // namespace

TEST(berthctl_inspect, reads_the_origins_of_counted_ids_only) {
  auto rec = read(tagged_record);
  ASSERT_EQ(rec.origins.size(), 2u);
  EXPECT_EQ(rec.origins["c89a0f0e1d2c3b4a5968"].dockerd, "4242@981273");
  EXPECT_EQ(rec.origins["c89a0f0e1d2c3b4a5968"].last_mounted_ms, 1764601445123);
  EXPECT_EQ(rec.origins["ecs-task-1"].dockerd, "");
  EXPECT_EQ(rec.origins.count("gone"), 0u) << "an ID that mounts does not count";
}

TEST(berthctl_inspect, shows_count_dockerd_and_last_mounted_per_id) {
  auto text = format_record(read(tagged_record));
  EXPECT_NE(text.find("mounts:        4\n"
                      "  0000untagged: count 1, dockerd unknown, last mounted unknown\n"
                      "  c89a0f0e1d2c3b4a5968: count 2, dockerd 4242@981273, "
                      "last mounted 2025-12-01T15:04:05Z\n"
                      "  ecs-task-1: count 1, dockerd unknown, last mounted "
                      "2025-12-01T15:00:00Z\n"),
            std::string::npos)
    << text;
}

TEST(berthctl_inspect, a_record_without_origins_shows_unknown) {
  auto rec = read(R"({"name": "kv", "mounts": {"abc": 1}, "mounted": true})");
  EXPECT_TRUE(rec.origins.empty());
  EXPECT_EQ(format_mount_ids(rec), "  abc: count 1, dockerd unknown, last mounted unknown\n");
  rec.mounts.clear();
  EXPECT_EQ(format_mount_ids(rec), "");
}

TEST(berthctl_inspect, times_are_rfc3339_utc_or_unknown) {
  EXPECT_EQ(format_mounted_at(0), "unknown");
  EXPECT_EQ(format_mounted_at(-5), "unknown");
  EXPECT_EQ(format_mounted_at(1000), "1970-01-01T00:00:01Z");
  EXPECT_EQ(format_mounted_at(1764601445999), "2025-12-01T15:04:05Z");
}

TEST(berthctl_inspect, reads_and_shows_a_volumes_health) {
  auto figures = figures_of(
    R"([{"name":"a","health":"healthy"},)"
    R"({"name":"b","health":"abnormal","conditions":[{"reason":"mount_gone","message":"gone"}]},)"
    R"({"name":"c"}])");
  ASSERT_EQ(figures.size(), 2U) << "c said nothing of its health";
  EXPECT_EQ(figures["a"].healthy, std::optional<bool>{true});
  EXPECT_EQ(figures["b"].healthy, std::optional<bool>{false});
  ASSERT_EQ(figures["b"].conditions.size(), 1U);
  EXPECT_EQ(figures["b"].conditions[0].first, "mount_gone");
  volume_record b;
  b.name = "b";
  auto text = format_record(b, figures);
  EXPECT_NE(text.find("health:        abnormal\n  mount_gone: gone\n"), std::string::npos) << text;
  b.name = "a";
  EXPECT_NE(format_record(b, figures).find("health:        healthy\n"), std::string::npos);
}
