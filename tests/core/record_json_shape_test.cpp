// The record's JSON as the journal keeps it: the exact bytes of its shape, and the load
// errors of the fields whose reading has rules beyond their type (record_json_read.cpp).
// The round trips and older shapes are record_json_test.cpp.

#include "core/errors.hpp"
#include "core/record_json.hpp"

#include <gtest/gtest.h>

using namespace berth;

// The journal's bytes are a format: records written by berth before the fields moved
// into one table (fields_of) must be what it writes now, key for key, so that an older
// berth reads a newer journal and a diff of two journals shows only what changed.
TEST(record_json, the_journal_shape_is_the_one_berth_always_wrote) {
  volume_record docker;
  docker.name = "web";
  docker.options = {{"size", "1g"}};
  docker.created_at = "2026-12-05T00:00:00Z";
  docker.mounts = {{"a", 2}};
  docker.origins = {{"a", {"123@456", 1700000000000}}};
  docker.mounted = true;
  docker.mountpoint = "/m/web";
  docker.owner = record_owner::docker;
  EXPECT_EQ(record_to_json(docker),
            R"({"name":"web","backend":"local","options":{"size":"1g"},)"
            R"("created_at":"2026-12-05T00:00:00Z","mounts":{"a":2},)"
            R"("mount_origins":{"a":{"dockerd":"123@456","last_mounted_ms":1700000000000}},)"
            R"("mounted":true,"mountpoint":"/m/web","owner":"docker"})");

  volume_record csi;
  csi.name = "pvc-1";
  csi.backend = "block";
  csi.owner = record_owner::csi;
  csi.capacity_bytes = 1 << 30;
  csi.source = snapshot_source("s1");
  csi.staging_path = "/st";
  csi.stage_flags = {"noatime"};
  csi.device = "/dev/loop3";
  csi.published = {{"/t1", {true, false, {"ro"}, true}}};
  csi.mutable_parameters = {{"readAheadKB", "128"}};
  csi.modifications = 3;
  csi.consistency = copy_crash_consistent;
  // Staged with the volume's own fs type: "staged_block" and "stage_flags" are written
  // while staged, "stage_fs_type" only when set.
  EXPECT_EQ(record_to_json(csi),
            R"({"name":"pvc-1","backend":"block","options":{},"created_at":"","mounts":{},)"
            R"("mounted":false,"mountpoint":"","owner":"csi","capacity_bytes":1073741824,)"
            R"("source":"snapshot:s1","staging_path":"/st","staged_block":false,)"
            R"("stage_flags":["noatime"],"device":"/dev/loop3",)"
            R"("mutable_parameters":{"readAheadKB":"128"},"modifications":3,)"
            R"("consistency":"crash-consistent",)"
            R"("published":{"/t1":{"readonly":true,"block":false,"flags":["ro"],)"
            R"("created":true}}})");

  volume_record snapshot;
  snapshot.name = "snap";
  snapshot.kind = record_kind::snapshot;
  snapshot.source = volume_source("pvc-1");
  EXPECT_EQ(record_to_json(snapshot),
            R"({"name":"snap","backend":"local","options":{},"created_at":"","mounts":{},)"
            R"("mounted":false,"mountpoint":"","kind":"snapshot","source":"volume:pvc-1"})");
  EXPECT_EQ(record_to_json(snapshot, record_shape::full),
            R"({"name":"snap","backend":"local","options":{},"created_at":"","mounts":{},)"
            R"("mounted":false,"mountpoint":"","kind":"snapshot","capacity_bytes":0,)"
            R"("source":"volume:pvc-1","mutable_parameters":{},"modifications":0})");
}

TEST(record_json, a_bad_mount_count_is_a_load_error_naming_its_id) {
  auto rec = record_from_json(R"({"name":"v","mounts":{"c1":"two"}})");
  ASSERT_FALSE(rec);
  EXPECT_NE(describe(rec.error()).find("\"c1\""), std::string::npos) << describe(rec.error());
  EXPECT_NE(describe(rec.error()).find("mounts"), std::string::npos) << describe(rec.error());
}

// Only an absent "mounted" is an older shape (worked out from the counts); a null is a
// damaged record, refused as any wrong type is.
TEST(record_json, a_null_mounted_flag_is_refused_and_an_absent_one_is_worked_out) {
  auto null_flag = record_from_json(R"({"name":"v","mounts":{"a":1},"mounted":null})");
  ASSERT_FALSE(null_flag);
  EXPECT_NE(describe(null_flag.error()).find("mounted"), std::string::npos);
  auto absent = record_from_json(R"({"name":"v","mounts":{"a":1}})");
  ASSERT_TRUE(absent) << describe(absent.error());
  EXPECT_TRUE(absent->mounted);
}
