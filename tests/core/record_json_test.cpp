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

// -- CSI fields ----------------------------------------------------------------------------

TEST(record_json, round_trips_every_csi_field) {
  volume_record rec;
  rec.name = "pvc-1";
  rec.backend = "block";
  rec.options = {{"fsType", "xfs"}};
  rec.created_at = "2026-11-30T18:00:00Z";
  rec.kind = record_kind::volume;
  rec.capacity_bytes = 5ull * 1024 * 1024 * 1024 + 1; // beyond 32 bits
  rec.source = snapshot_source("snap-1");
  rec.staging_path = "/var/lib/kubelet/plugins/berth/globalmount/pvc-1";
  rec.staged_block = false;
  rec.stage_flags = {"noatime", "nodiscard"};
  rec.stage_fs_type = "ext4";
  rec.device = "/dev/loop7";
  publication ro;
  ro.readonly = true;
  ro.flags = {"nosuid", "nodev"};
  ro.created = true;
  publication dev;
  dev.block = true;
  rec.published = {{"/var/lib/kubelet/pods/a/volumes/pvc-1/mount", ro},
                   {"/var/lib/kubelet/pods/b/volumeDevices/pvc-1", dev}};
  auto back = record_from_json(record_to_json(rec));
  ASSERT_TRUE(back) << describe(back.error());
  EXPECT_EQ(*back, rec);
  EXPECT_EQ(back->published.at("/var/lib/kubelet/pods/a/volumes/pvc-1/mount").flags,
            (std::vector<std::string>{"nosuid", "nodev"}))
    << "flag order is kept";

  rec.staged_block = true;
  rec.stage_flags.clear();
  back = record_from_json(record_to_json(rec));
  ASSERT_TRUE(back) << describe(back.error());
  EXPECT_TRUE(back->staged_block);
  EXPECT_EQ(*back, rec);
}

TEST(record_json, a_publication_from_before_the_created_flag_loads_as_not_created) {
  // Unpublish deletes a target only when the record says berth made it: an older
  // record cannot say so, and kubelet removes its target directory itself.
  auto back = record_from_json(
    R"({"name":"pvc-1","backend":"block","staging_path":"/k/s","published":)"
    R"({"/k/t":{"readonly":false,"block":true,"flags":[]}}})");
  ASSERT_TRUE(back) << describe(back.error());
  EXPECT_FALSE(back->published.at("/k/t").created);
  EXPECT_TRUE(back->stage_fs_type.empty()) << "re-staged with the volume's fsType, as before";
  auto bad = record_from_json(
    R"({"name":"pvc-1","published":{"/k/t":{"created":"yes"}}})");
  ASSERT_FALSE(bad);
  EXPECT_NE(describe(bad.error()).find("created"), std::string::npos) << describe(bad.error());
}

TEST(record_json, round_trips_a_snapshot) {
  volume_record snap;
  snap.name = "snap-1";
  snap.backend = "block";
  snap.kind = record_kind::snapshot;
  snap.source = volume_source("pvc-1");
  snap.capacity_bytes = 10 * 1024 * 1024;
  auto back = record_from_json(record_to_json(snap));
  ASSERT_TRUE(back) << describe(back.error());
  EXPECT_EQ(back->kind, record_kind::snapshot);
  EXPECT_EQ(*back, snap);
}

TEST(record_json, a_docker_record_without_csi_fields_reads_as_a_volume) {
  auto rec = record_from_json(R"({"name":"v","backend":"local","options":{"type":"tmpfs"},)"
                              R"("created_at":"2026-01-01T00:00:00Z","mounts":{"c1":1},)"
                              R"("mounted":true,"mountpoint":"/mnt/v"})");
  ASSERT_TRUE(rec) << describe(rec.error());
  EXPECT_EQ(rec->kind, record_kind::volume);
  EXPECT_EQ(rec->capacity_bytes, 0u);
  EXPECT_TRUE(rec->source.empty());
  EXPECT_TRUE(rec->staging_path.empty());
  EXPECT_FALSE(rec->staged_block);
  EXPECT_TRUE(rec->stage_flags.empty());
  EXPECT_TRUE(rec->device.empty());
  EXPECT_TRUE(rec->published.empty());
  EXPECT_FALSE(in_csi_use(*rec));
  // And a Docker record is written without them, as small as before.
  auto json = record_to_json(*rec);
  for (auto key : {"kind", "capacity_bytes", "source", "staging_path", "staged_block",
                   "stage_flags", "device", "published"}) {
    EXPECT_EQ(json.find(std::string{"\""} + key + "\""), std::string::npos) << key;
  }
}

TEST(record_json, bad_csi_fields_are_rejected_naming_the_field) {
  struct bad_case {
    const char* json;
    const char* names;
  };
  const bad_case cases[] = {
    {R"({"name":"v","kind":"disk"})", "kind"},
    {R"({"name":"v","kind":"disk"})", "\"disk\""},
    {R"({"name":"v","kind":""})", "kind"},
    {R"({"name":"v","kind":3})", "kind"},
    {R"({"name":"v","capacity_bytes":"10"})", "capacity_bytes"},
    {R"({"name":"v","capacity_bytes":-1})", "capacity_bytes"},
    {R"({"name":"v","capacity_bytes":1.5})", "capacity_bytes"},
    {R"({"name":"v","source":7})", "source"},
    {R"({"name":"v","source":"disk:v"})", "\"disk:v\""},
    {R"({"name":"v","source":"v"})", "\"v\""},
    {R"({"name":"v","source":"volume:"})", "\"volume:\""},
    {R"({"name":"v","source":"Snapshot:s"})", "\"Snapshot:s\""},
    {R"({"name":"v","staging_path":["/s"]})", "staging_path"},
    {R"({"name":"v","staged_block":"yes"})", "staged_block"},
    {R"({"name":"v","stage_flags":"noatime"})", "stage_flags"},
    {R"({"name":"v","stage_flags":["noatime",1]})", "stage_flags"},
    {R"({"name":"v","device":false})", "device"},
    {R"({"name":"v","published":["/t"]})", "published"},
    {R"({"name":"v","published":{"/pods/t":true}})", "/pods/t"},
    {R"({"name":"v","published":{"/t":{"readonly":"no"}}})", "readonly"},
    {R"({"name":"v","published":{"/t":{"block":1}}})", "block"},
    {R"({"name":"v","published":{"/t":{"flags":"ro"}}})", "flags"},
    {R"({"name":"v","published":{"/t":{"flags":[null]}}})", "flags"},
  };
  for (const auto& c : cases) {
    auto rec = record_from_json(c.json);
    ASSERT_FALSE(rec) << c.json << " was accepted";
    EXPECT_EQ(rec.error().code(), static_cast<uint8_t>(ec::invalid_argument)) << c.json;
    EXPECT_NE(describe(rec.error()).find(c.names), std::string::npos)
      << c.json << ": \"" << describe(rec.error()) << "\" does not name " << c.names;
  }
}

TEST(record_json, kind_and_source_keep_the_journal_spelling) {
  // A CSI record as older berth wrote it: it loads typed and is written back the same.
  const std::string old_clone =
    R"({"name":"r","backend":"block","kind":"volume","source":"snapshot:s1"})";
  auto clone = record_from_json(old_clone);
  ASSERT_TRUE(clone) << describe(clone.error());
  EXPECT_EQ(clone->kind, record_kind::volume);
  EXPECT_EQ(clone->source, snapshot_source("s1"));
  auto snap = record_from_json(R"({"name":"s1","kind":"snapshot","source":"volume:pvc-1"})");
  ASSERT_TRUE(snap) << describe(snap.error());
  EXPECT_EQ(snap->kind, record_kind::snapshot);
  EXPECT_EQ(snap->source, volume_source("pvc-1"));
  auto json = record_to_json(*snap);
  EXPECT_NE(json.find(R"("kind":"snapshot")"), std::string::npos) << json;
  EXPECT_NE(json.find(R"("source":"volume:pvc-1")"), std::string::npos) << json;
  json = record_to_json(*clone);
  EXPECT_EQ(json.find(R"("kind")"), std::string::npos) << "a volume's kind is left out: " << json;
  EXPECT_NE(json.find(R"("source":"snapshot:s1")"), std::string::npos) << json;
}

// -- owner: Docker and CSI are separate namespaces ------------------------------

TEST(record_json, owner_round_trips) {
  for (auto owner : {record_owner::docker, record_owner::csi}) {
    volume_record rec;
    rec.name = "v1";
    rec.owner = owner;
    auto back = record_from_json(record_to_json(rec));
    ASSERT_TRUE(back) << describe(back.error());
    EXPECT_EQ(back->owner, owner);
  }
}

TEST(record_json, older_records_get_their_owner_from_their_fields) {
  auto owner = [](const std::string& json) {
    auto rec = record_from_json(json);
    EXPECT_TRUE(rec) << json;
    return rec ? owner_of(*rec) : record_owner::unset;
  };
  // Docker volumes (and anything without a CSI trace) stay Docker's.
  EXPECT_EQ(owner(R"({"name":"v"})"), record_owner::docker);
  EXPECT_EQ(owner(R"({"name":"v","options":{"type":"tmpfs"},"mounts":{"a":1}})"),
            record_owner::docker);
  // Any CSI trace makes it CSI's.
  EXPECT_EQ(owner(R"({"name":"s","kind":"snapshot","backend":"block"})"), record_owner::csi);
  EXPECT_EQ(owner(R"({"name":"v","backend":"block"})"), record_owner::csi);
  EXPECT_EQ(owner(R"({"name":"v","capacity_bytes":1048576})"), record_owner::csi);
  EXPECT_EQ(owner(R"({"name":"v","source":"volume:a"})"), record_owner::csi);
  EXPECT_EQ(owner(R"({"name":"v","staging_path":"/k/s"})"), record_owner::csi);
  EXPECT_EQ(owner(R"({"name":"v","published":{"/k/t":{}}})"), record_owner::csi);
  // A stored owner wins; an unknown one is refused by name.
  EXPECT_EQ(owner(R"({"name":"v","owner":"csi"})"), record_owner::csi);
  auto bad = record_from_json(R"({"name":"v","owner":"kubelet"})");
  ASSERT_FALSE(bad);
  EXPECT_NE(describe(bad.error()).find("kubelet"), std::string::npos);
}

TEST(record_json, the_full_shape_writes_size_parameters_and_modifications_even_when_unset) {
  volume_record rec;
  rec.name = "v";
  rec.owner = record_owner::docker;
  auto journal = record_to_json(rec);
  auto full = record_to_json(rec, record_shape::full);
  for (auto key : {"capacity_bytes", "mutable_parameters", "modifications"}) {
    // The journal stays as small as before; the admin API's shape names them always.
    EXPECT_EQ(journal.find(std::string{"\""} + key + "\""), std::string::npos) << key;
  }
  EXPECT_NE(full.find(R"("capacity_bytes":0)"), std::string::npos) << full;
  EXPECT_NE(full.find(R"("mutable_parameters":{})"), std::string::npos) << full;
  EXPECT_NE(full.find(R"("modifications":0)"), std::string::npos) << full;
  auto back = record_from_json(full);
  ASSERT_TRUE(back) << describe(back.error());
  EXPECT_EQ(*back, rec);
  rec.capacity_bytes = 1u << 30;
  rec.mutable_parameters = {{"readAheadKB", "256"}};
  rec.modifications = 3;
  EXPECT_EQ(record_to_json(rec, record_shape::full), record_to_json(rec));
}

// -- mount_origins: who made each mount ID's count ------------------------------

namespace {

volume_record with_origins() {
  volume_record rec;
  rec.name = "kv";
  rec.owner = record_owner::docker;
  rec.mounts = {{"c89a", 2}, {"d1e2", 1}, {"ecs1", 1}};
  rec.origins = {{"c89a", mount_id_origin{"4242@981273", 1764612000123}},
                 {"d1e2", mount_id_origin{"", 1764612000999}}};
  rec.mounted = true;
  rec.mountpoint = "/var/lib/berth/volumes/kv/mnt";
  return rec;
}

} // namespace

TEST(record_json, mount_origins_round_trip_in_the_journal_and_the_full_shape) {
  auto rec = with_origins();
  for (auto shape : {record_shape::journal, record_shape::full}) {
    auto json = record_to_json(rec, shape);
    EXPECT_NE(json.find(R"("mount_origins":{"c89a":{"dockerd":"4242@981273",)"
                        R"("last_mounted_ms":1764612000123},"d1e2":{"dockerd":"",)"
                        R"("last_mounted_ms":1764612000999}})"),
              std::string::npos)
      << json;
    auto back = record_from_json(json);
    ASSERT_TRUE(back) << describe(back.error());
    EXPECT_EQ(*back, rec);
    EXPECT_EQ(back->origins.count("ecs1"), 0u) << "an ID without an origin stays without one";
  }
}

TEST(record_json, mount_origins_are_written_only_when_there_are_some) {
  auto rec = with_origins();
  rec.origins.clear();
  for (auto shape : {record_shape::journal, record_shape::full}) {
    auto json = record_to_json(rec, shape);
    EXPECT_EQ(json.find("mount_origins"), std::string::npos) << json;
  }
}

TEST(record_json, a_record_from_before_issue_11_loads_with_no_origins) {
  auto rec = record_from_json(R"({"name":"v","mounts":{"a":1,"b":null}})");
  ASSERT_TRUE(rec) << describe(rec.error());
  EXPECT_EQ(total_mounts(*rec), 2u);
  EXPECT_TRUE(rec->origins.empty());
  auto null_origins = record_from_json(R"({"name":"v","mounts":{"a":1},"mount_origins":null})");
  ASSERT_TRUE(null_origins) << describe(null_origins.error());
  EXPECT_TRUE(null_origins->origins.empty());
}

TEST(record_json, an_origin_of_an_id_not_counted_is_dropped_at_load) {
  auto rec = record_from_json(
    R"({"name":"v","mounts":{"a":1},"mount_origins":{)"
    R"("a":{"dockerd":"1@2","last_mounted_ms":5},"gone":{"dockerd":"1@2","last_mounted_ms":6}}})");
  ASSERT_TRUE(rec) << describe(rec.error());
  ASSERT_EQ(rec->origins.size(), 1u);
  EXPECT_EQ(rec->origins.at("a"), (mount_id_origin{"1@2", 5}));
  // The same with the origins before the counts in the object: the order of keys does not matter.
  auto first = record_from_json(
    R"({"name":"v","mount_origins":{"gone":{"dockerd":"1@2","last_mounted_ms":6}},"mounts":{}})");
  ASSERT_TRUE(first) << describe(first.error());
  EXPECT_TRUE(first->origins.empty());
}

TEST(record_json, an_origin_without_a_field_takes_its_default) {
  auto rec = record_from_json(
    R"({"name":"v","mounts":{"a":1,"b":1},"mount_origins":{"a":{"dockerd":"1@2"},)"
    R"("b":{"last_mounted_ms":7}}})");
  ASSERT_TRUE(rec) << describe(rec.error());
  EXPECT_EQ(rec->origins.at("a"), (mount_id_origin{"1@2", 0}));
  EXPECT_EQ(rec->origins.at("b"), (mount_id_origin{"", 7}));
}

TEST(record_json, bad_mount_origins_are_load_errors_naming_the_field) {
  struct bad_case {
    const char* json;
    std::vector<const char*> names;
  };
  const bad_case cases[] = {
    {R"({"name":"v","mounts":{"a":1},"mount_origins":["a"]})", {"mount_origins"}},
    {R"({"name":"v","mounts":{"a":1},"mount_origins":"a"})", {"mount_origins"}},
    {R"({"name":"v","mounts":{"a":1},"mount_origins":{"a":"1@2"}})", {"mount_origins", "\"a\""}},
    {R"({"name":"v","mounts":{"a":1},"mount_origins":{"a":{"dockerd":12}}})",
     {"mount_origins", "\"a\"", "dockerd"}},
    {R"({"name":"v","mounts":{"a":1},"mount_origins":{"a":{"last_mounted_ms":"5"}}})",
     {"mount_origins", "\"a\"", "last_mounted_ms"}},
    {R"({"name":"v","mounts":{"a":1},"mount_origins":{"a":{"last_mounted_ms":1.5}}})",
     {"mount_origins", "\"a\"", "last_mounted_ms"}},
    // A wrong type is an error even for an ID that is not counted (the record is damaged).
    {R"({"name":"v","mounts":{},"mount_origins":{"z":{"dockerd":false}}})",
     {"mount_origins", "\"z\"", "dockerd"}},
  };
  for (const auto& c : cases) {
    auto rec = record_from_json(c.json);
    ASSERT_FALSE(rec) << c.json << " was accepted";
    EXPECT_EQ(rec.error().code(), static_cast<uint8_t>(ec::invalid_argument)) << c.json;
    for (const auto* name : c.names) {
      EXPECT_NE(describe(rec.error()).find(name), std::string::npos)
        << c.json << ": \"" << describe(rec.error()) << "\" does not name " << name;
    }
  }
}

// Found by tests/fuzz/record_json_fuzz: stage fields without a staging path were read,
// but write_record writes them only with one, so the record read back differed.
TEST(record_json, stage_fields_without_a_staging_path_read_as_unstaged_and_round_trip) {
  auto rec = record_from_json(R"({"name":"pvc-1","backend":"block","staged_block":true,)"
                              R"("stage_flags":["noatime"],"stage_fs_type":"xfs"})");
  ASSERT_TRUE(rec) << describe(rec.error());
  EXPECT_FALSE(rec->staged_block);
  EXPECT_TRUE(rec->stage_flags.empty());
  EXPECT_TRUE(rec->stage_fs_type.empty());
  auto back = record_from_json(record_to_json(*rec));
  ASSERT_TRUE(back) << describe(back.error());
  EXPECT_EQ(*back, *rec);
}
