#include "core/record_kind.hpp"
#include "core/volume_record.hpp"

#include <vector>

#include <caf/binary_deserializer.hpp>
#include <caf/binary_serializer.hpp>
#include <caf/deep_to_string.hpp>
#include <gtest/gtest.h>

using namespace berth;

TEST(record_kind, spells_and_parses_both_kinds) {
  EXPECT_EQ(to_string(record_kind::volume), "volume");
  EXPECT_EQ(to_string(record_kind::snapshot), "snapshot");
  EXPECT_EQ(parse_record_kind("volume"), record_kind::volume);
  EXPECT_EQ(parse_record_kind("snapshot"), record_kind::snapshot);
  for (auto bad : {"", "Volume", "snapshots", "disk", "volume "}) {
    EXPECT_FALSE(parse_record_kind(bad)) << bad;
  }
}

TEST(content_source, describes_itself_as_the_journal_spells_it) {
  EXPECT_EQ(snapshot_source("s1").describe(), "snapshot:s1");
  EXPECT_EQ(volume_source("pvc-1").describe(), "volume:pvc-1");
  EXPECT_EQ(content_source{}.describe(), "");
  EXPECT_TRUE(content_source{}.empty());
  EXPECT_FALSE(volume_source("v").empty());
}

TEST(content_source, parses_what_it_describes) {
  for (const auto& src : {snapshot_source("s1"), volume_source("pvc-1"), content_source{}}) {
    auto back = parse_content_source(src.describe());
    ASSERT_TRUE(back) << src.describe();
    EXPECT_EQ(*back, src) << src.describe();
  }
}

TEST(content_source, refuses_a_source_without_a_known_kind_or_a_name) {
  for (auto bad : {"v", "disk:v", "volume:", "snapshot:", ":v", "Volume:v", "volume"}) {
    EXPECT_FALSE(parse_content_source(bad)) << bad;
  }
}

TEST(content_source, equal_by_kind_and_name_and_every_empty_source_is_the_same) {
  EXPECT_EQ(volume_source("a"), volume_source("a"));
  EXPECT_NE(volume_source("a"), snapshot_source("a"));
  EXPECT_NE(volume_source("a"), volume_source("b"));
  EXPECT_EQ(content_source{}, snapshot_source(""));
  EXPECT_NE(content_source{}, volume_source("a"));
}

// -- CAF: both travel in messages (volume_record, volume_spec, the remove message) --

TEST(record_kind, survives_caf_serialization_inside_a_record) {
  volume_record rec;
  rec.name = "r";
  rec.kind = record_kind::snapshot;
  rec.source = volume_source("pvc-1");
  std::vector<char> buf;
  caf::binary_serializer sink{nullptr, buf};
  ASSERT_FALSE(sink(rec));
  volume_record back;
  caf::binary_deserializer source{nullptr, buf};
  ASSERT_FALSE(source(back));
  EXPECT_EQ(back.kind, record_kind::snapshot);
  EXPECT_EQ(back.source, volume_source("pvc-1"));
  EXPECT_EQ(back, rec);
}

TEST(record_kind, prints_by_name_in_caf_strings) {
  EXPECT_EQ(caf::deep_to_string(record_kind::snapshot), "snapshot");
  EXPECT_EQ(caf::deep_to_string(snapshot_source("s1")), "snapshot:s1");
  volume_record rec;
  rec.kind = record_kind::snapshot;
  rec.source = volume_source("pvc-1");
  auto text = caf::deep_to_string(rec);
  EXPECT_NE(text.find("snapshot"), std::string::npos) << text;
  EXPECT_NE(text.find("volume:pvc-1"), std::string::npos) << text;
}
