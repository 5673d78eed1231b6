#include "core/record_json.hpp"
#include "core/errors.hpp"

#include <gtest/gtest.h>

using namespace berth;

TEST(record_json, round_trips_every_field) {
  volume_record rec;
  rec.name = "v1";
  rec.options = {{"type", "tmpfs"}, {"device", "tmpfs"}};
  rec.created_at = "2026-11-30T18:00:00Z";
  rec.mounts = {{"c1", 2}, {"c2", 1}};
  rec.mounted = true;
  rec.mountpoint = "/var/lib/berth/volumes/v1/mnt";
  auto back = record_from_json(record_to_json(rec));
  ASSERT_TRUE(back) << describe(back.error());
  EXPECT_EQ(*back, rec);
}

TEST(record_json, null_or_zero_mount_counts_become_one) {
  auto rec = record_from_json(R"({"name":"v","mounts":{"a":null,"b":0,"c":3}})");
  ASSERT_TRUE(rec);
  EXPECT_EQ(rec->mounts.at("a"), 1u);
  EXPECT_EQ(rec->mounts.at("b"), 1u);
  EXPECT_EQ(rec->mounts.at("c"), 3u);
  EXPECT_TRUE(rec->mounted) << "an old record with IDs is mounted";
  EXPECT_EQ(rec->backend, "local");
}

TEST(record_json, a_set_of_ids_counts_each_once) {
  auto rec = record_from_json(R"({"name":"v","mounts":["a","b"]})");
  ASSERT_TRUE(rec);
  EXPECT_EQ(total_mounts(*rec), 2u);
}

TEST(record_json, errors_name_the_bad_field) {
  auto missing = record_from_json(R"({"backend":"local"})");
  ASSERT_FALSE(missing);
  EXPECT_NE(describe(missing.error()).find("name"), std::string::npos);
  auto bad_opt = record_from_json(R"({"name":"v","options":{"o":1}})");
  ASSERT_FALSE(bad_opt);
  EXPECT_NE(describe(bad_opt.error()).find("option \"o\""), std::string::npos);
  EXPECT_FALSE(record_from_json("{not json"));
}
