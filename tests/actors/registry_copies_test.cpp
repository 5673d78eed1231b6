// The registry's copies of Docker volumes: snapshots taken in Docker's namespace,
// -o from-snapshot and -o clone-of. A source that cannot be removed while a copy of it is
// being made is in registry_driver_test.cpp, under CAF's test coordinator.

#include "tests/actors/registry_fixture.hpp"

using namespace berth;
using namespace std::chrono_literals;
using berth::test::code_of;
using berth::test::mib;
using berth::test::registry_test;

namespace {

/// A Docker volume as loaded from state, with a size (a block volume's).
volume_record docker_volume(const std::string& name, uint64_t capacity) {
  volume_record rec;
  rec.name = name;
  rec.owner = record_owner::docker;
  rec.capacity_bytes = capacity;
  return rec;
}

/// What berthctl snapshot create asks the registry for.
volume_spec docker_snapshot_of(const std::string& volume) {
  volume_spec spec;
  spec.kind = record_kind::snapshot;
  spec.owner = record_owner::docker;
  spec.source = volume_source(volume);
  return spec;
}

caf::error docker_create(caf::scoped_actor& self, const registry_actor& reg,
                         const std::string& name, option_map options) {
  return test::call<atom::ok>(self, reg, atom::create_v, name, std::move(options));
}

} // namespace

TEST_F(registry_test, a_docker_snapshot_and_a_volume_made_of_it_are_dockers) {
  start({docker_volume("v", 64 * mib)});
  auto snap = test::ask<volume_record>(self, reg, atom::create_v, std::string{"s"},
                                       docker_snapshot_of("v"));
  ASSERT_TRUE(snap) << describe(snap.error());
  EXPECT_EQ(snap->owner, record_owner::docker);
  EXPECT_EQ(snap->kind, record_kind::snapshot);
  EXPECT_EQ(snap->capacity_bytes, 64 * mib) << "a snapshot is its volume's size";
  EXPECT_EQ(snap->backend, "local") << "it lives on its volume's backend";

  ASSERT_FALSE(docker_create(self, reg, "r", {{"from-snapshot", "s"}}));
  auto restored = test::ask<volume_record>(self, reg, atom::get_v, std::string{"r"});
  ASSERT_TRUE(restored);
  EXPECT_EQ(restored->owner, record_owner::docker);
  EXPECT_EQ(restored->source, snapshot_source("s"));
  EXPECT_EQ(restored->capacity_bytes, 64 * mib) << "no size: the source's";
  EXPECT_EQ(restored->options, (option_map{{"from-snapshot", "s"}})) << "the options as given";

  ASSERT_FALSE(docker_create(self, reg, "c", {{"clone-of", "v"}}));
  auto clone = test::ask<volume_record>(self, reg, atom::get_v, std::string{"c"});
  ASSERT_TRUE(clone);
  EXPECT_EQ(clone->source, volume_source("v"));
  EXPECT_FALSE(docker_create(self, reg, "c", {{"clone-of", "v"}})) << "a retry is the same";
  EXPECT_EQ(storage->creates, 3) << "the snapshot, the restore and the clone; no second clone";

  // The snapshot outlives its volume, and is no volume to Docker's Remove.
  ASSERT_FALSE(test::call<atom::ok>(self, reg, atom::remove_v, std::string{"v"},
                                    record_owner::docker, record_kind::volume));
  auto err = test::call<atom::ok>(self, reg, atom::remove_v, std::string{"s"},
                                  record_owner::docker, record_kind::volume);
  EXPECT_EQ(err.code(), code_of(ec::not_found)) << describe(err);
  EXPECT_FALSE(test::call<atom::ok>(self, reg, atom::remove_v, std::string{"s"},
                                    record_owner::docker, record_kind::snapshot));
}

TEST_F(registry_test, a_copy_smaller_than_its_source_is_refused_and_leaves_nothing) {
  start({docker_volume("v", 64 * mib)});
  auto err = docker_create(self, reg, "c", {{"clone-of", "v"}, {"size", std::to_string(mib)}});
  ASSERT_TRUE(err);
  EXPECT_EQ(err.code(), code_of(ec::out_of_range)) << describe(err);
  EXPECT_NE(describe(err).find("less than its source volume:v (67108864 bytes)"),
            std::string::npos)
    << describe(err);
  EXPECT_TRUE(test::call<volume_record>(self, reg, atom::get_v, std::string{"c"}))
    << "no name is left behind";
  EXPECT_EQ(storage->creates, 0);
  ASSERT_FALSE(docker_create(self, reg, "c",
                             {{"clone-of", "v"}, {"size", std::to_string(128 * mib)}}));
  EXPECT_EQ(test::ask<volume_record>(self, reg, atom::get_v, std::string{"c"})->capacity_bytes,
            128 * mib)
    << "a copy takes the larger size it asks for";
}

TEST_F(registry_test, a_docker_copy_sees_only_dockers_sources) {
  start({docker_volume("dv", 64 * mib)});
  ASSERT_FALSE(test::call<volume_record>(self, reg, atom::create_v, std::string{"cv"},
                                         test::csi_spec(8 * mib)));
  ASSERT_FALSE(test::call<volume_record>(self, reg, atom::create_v, std::string{"cs"},
                                         test::snapshot_of("cv")));
  for (auto [key, source] : {std::pair{"clone-of", "cv"}, std::pair{"from-snapshot", "cs"},
                             std::pair{"from-snapshot", "dv"}, std::pair{"clone-of", "ghost"}}) {
    SCOPED_TRACE(std::string{key} + "=" + source);
    auto err = docker_create(self, reg, "x", {{key, source}});
    ASSERT_TRUE(err);
    EXPECT_EQ(err.code(), code_of(ec::not_found)) << describe(err);
    EXPECT_NE(describe(err).find(std::string{"option "} + key + " of volume x: no Docker"),
              std::string::npos)
      << describe(err);
  }
  auto err = test::call<volume_record>(self, reg, atom::create_v, std::string{"x"},
                                       docker_snapshot_of("cv"));
  EXPECT_EQ(err.code(), code_of(ec::not_found)) << "Docker snapshots no CSI volume";
  EXPECT_TRUE(test::call<volume_record>(self, reg, atom::get_v, std::string{"x"}))
    << "no name is left behind";
}

TEST_F(registry_test, a_copy_is_refused_another_backend_and_a_backend_that_cannot_copy) {
  start({docker_volume("v", 64 * mib)});
  auto err = docker_create(self, reg, "c", {{"clone-of", "v"}, {"backend", "block"}});
  ASSERT_TRUE(err);
  EXPECT_EQ(err.code(), code_of(ec::invalid_argument)) << describe(err);
  EXPECT_NE(describe(err).find("a copy lives on its source's backend"), std::string::npos);
  storage->copies = false;
  err = docker_create(self, reg, "c", {{"clone-of", "v"}});
  ASSERT_TRUE(err);
  EXPECT_EQ(err.code(), code_of(ec::unsupported)) << describe(err);
  EXPECT_NE(describe(err).find("need a volume made with -o backend=block"), std::string::npos);
  err = test::call<volume_record>(self, reg, atom::create_v, std::string{"s"},
                                  docker_snapshot_of("v"));
  EXPECT_EQ(err.code(), code_of(ec::unsupported)) << describe(err);
  EXPECT_EQ(storage->creates, 0);
}

TEST_F(registry_test, a_copy_records_what_its_backend_says_of_its_consistency) {
  start({docker_volume("v", 64 * mib)});
  storage->copy_consistency = copy_crash_consistent;
  auto snap = test::ask<volume_record>(self, reg, atom::create_v, std::string{"s"},
                                       docker_snapshot_of("v"));
  ASSERT_TRUE(snap) << describe(snap.error());
  EXPECT_EQ(snap->consistency, copy_crash_consistent);
  ASSERT_FALSE(docker_create(self, reg, "c", {{"clone-of", "v"}}));
  auto clone = test::ask<volume_record>(self, reg, atom::get_v, std::string{"c"});
  ASSERT_TRUE(clone);
  EXPECT_EQ(clone->consistency, copy_crash_consistent);
  storage->copy_consistency.clear();
  ASSERT_FALSE(docker_create(self, reg, "r", {{"from-snapshot", "s"}}));
  auto restored = test::ask<volume_record>(self, reg, atom::get_v, std::string{"r"});
  ASSERT_TRUE(restored);
  EXPECT_EQ(restored->consistency, "");
}

TEST_F(registry_test, a_source_its_backend_cannot_copy_is_refused_before_anything_is_made) {
  start({docker_volume("v", 64 * mib)});
  storage->uncopyable = "v";
  auto err = test::call<volume_record>(self, reg, atom::create_v, std::string{"s"},
                                       docker_snapshot_of("v"));
  ASSERT_TRUE(err);
  EXPECT_EQ(err.code(), code_of(ec::unsupported)) << describe(err);
  EXPECT_NE(describe(err).find("volume v cannot be copied"), std::string::npos);
  err = docker_create(self, reg, "c", {{"clone-of", "v"}});
  ASSERT_TRUE(err);
  EXPECT_EQ(err.code(), code_of(ec::unsupported)) << describe(err);
  EXPECT_EQ(storage->creates, 0);
  EXPECT_TRUE(test::call<volume_record>(self, reg, atom::get_v, std::string{"s"}))
    << "no name is left behind";
  EXPECT_TRUE(test::call<volume_record>(self, reg, atom::get_v, std::string{"c"}));
}

TEST_F(registry_test, a_volume_being_exported_cannot_be_removed_until_its_export_closes) {
  start({docker_volume("v", 0)});
  storage->copy_consistency = copy_crash_consistent;
  auto view = test::ask<export_view>(self, reg, atom::export_open_v, std::string{"v"},
                                     std::string{"e1"}, export_form::tree);
  ASSERT_TRUE(view) << describe(view.error());
  EXPECT_EQ(view->path, "/fake/exports/e1");
  EXPECT_EQ(view->consistency, copy_crash_consistent);
  auto err = test::call<atom::ok>(self, reg, atom::remove_v, std::string{"v"},
                                  record_owner::docker, record_kind::volume);
  ASSERT_TRUE(err);
  EXPECT_EQ(err.code(), code_of(ec::in_use)) << describe(err);
  EXPECT_NE(describe(err).find("snapshot, clone or export"), std::string::npos);
  ASSERT_FALSE(test::call<atom::ok>(self, reg, atom::export_close_v, std::string{"v"},
                                    std::string{"e1"}));
  EXPECT_TRUE(storage->open_exports.empty());
  EXPECT_FALSE(test::call<atom::ok>(self, reg, atom::remove_v, std::string{"v"},
                                    record_owner::docker, record_kind::volume))
    << "removed once the export has closed";
  auto gone = test::call<export_view>(self, reg, atom::export_open_v, std::string{"v"},
                                      std::string{"e2"}, export_form::tree);
  EXPECT_EQ(gone.code(), code_of(ec::not_found)) << describe(gone);
}

TEST_F(registry_test, an_import_is_checked_before_its_tar_and_made_from_its_tree) {
  start({docker_volume("v", 0)});
  auto taken = test::call<atom::ok>(self, reg, atom::import_check_v, std::string{"v"},
                                    option_map{});
  EXPECT_EQ(taken.code(), code_of(ec::already_exists)) << describe(taken);
  auto typed = test::call<atom::ok>(self, reg, atom::import_check_v, std::string{"n"},
                                    option_map{{"clone-of", "v"}});
  EXPECT_EQ(typed.code(), code_of(ec::invalid_argument)) << describe(typed);
  EXPECT_NE(describe(typed).find("cannot be given to an import"), std::string::npos);
  EXPECT_FALSE(test::call<atom::ok>(self, reg, atom::import_check_v, std::string{"n"},
                                    option_map{}));
  EXPECT_EQ(storage->creates, 0) << "a check makes nothing";
  ASSERT_FALSE(test::call<atom::ok>(self, reg, atom::create_v, std::string{"n"}, option_map{},
                                    std::string{"/staging/data"}));
  EXPECT_EQ(storage->imported_trees, (std::vector<std::string>{"/staging/data"}));
  auto made = test::ask<volume_record>(self, reg, atom::get_v, std::string{"n"});
  ASSERT_TRUE(made);
  EXPECT_EQ(made->owner, record_owner::docker);
  auto again = test::call<atom::ok>(self, reg, atom::create_v, std::string{"n"}, option_map{},
                                    std::string{"/staging/data"});
  EXPECT_EQ(again.code(), code_of(ec::already_exists)) << "an import makes a new volume";
}
