#include "recovery/reconcile.hpp"

#include <gtest/gtest.h>

#include "tests/actors/fakes.hpp"

using namespace berth;

namespace {

class reconcile_test : public ::testing::Test {
protected:
  std::shared_ptr<test::fake_backend> storage = std::make_shared<test::fake_backend>();
  std::map<std::string, std::shared_ptr<backend>> backends{{"local", storage}};
  state_snapshot state;

  void add(const std::string& name, std::map<std::string, uint32_t> counts, bool mounted) {
    volume_record rec;
    rec.name = name;
    rec.mounts = std::move(counts);
    rec.mounted = mounted;
    rec.mountpoint = mounted ? "/fake/" + name : "";
    state.volumes[name] = rec;
  }

  reconcile_report run(const std::string& boot, std::set<std::string> on_host) {
    return reconcile(state, boot, backends, on_host, "/state/volumes");
  }
};

} // namespace

TEST_F(reconcile_test, same_boot_keeps_counts_and_mounts) {
  state.boot_id = "boot-a";
  add("v", {{"c1", 2}}, true);
  auto report = run("boot-a", {"/fake/v"});
  EXPECT_FALSE(report.new_boot);
  EXPECT_EQ(state.volumes["v"].mounts.at("c1"), 2u);
  EXPECT_TRUE(state.volumes["v"].mounted);
  EXPECT_EQ(storage->mounts + storage->unmounts + storage->lazy_unmounts, 0);
}

TEST_F(reconcile_test, same_boot_remounts_a_counted_volume_whose_mount_vanished) {
  state.boot_id = "boot-a";
  add("v", {{"c1", 1}}, true);
  auto report = run("boot-a", {});
  EXPECT_EQ(report.remounted, 1u);
  EXPECT_EQ(storage->mounts, 1);
  EXPECT_TRUE(state.volumes["v"].mounted);
}

TEST_F(reconcile_test, a_mount_the_state_lacks_is_undone) {
  // Crash between mount(2) and the journal commit: mounted on the host, no ID in the state.
  state.boot_id = "boot-a";
  add("v", {}, false);
  auto report = run("boot-a", {"/fake/v"});
  EXPECT_EQ(report.unmounted, 1u);
  EXPECT_EQ(storage->lazy_unmounts, 1);
  EXPECT_FALSE(state.volumes["v"].mounted);
}

TEST_F(reconcile_test, a_new_boot_clears_counts_and_publications) {
  state.boot_id = "boot-a";
  add("v", {{"c1", 1}, {"c2", 3}}, true);
  auto report = run("boot-b", {});
  EXPECT_TRUE(report.new_boot);
  EXPECT_EQ(report.cleared, 1u);
  EXPECT_TRUE(state.volumes["v"].mounts.empty());
  EXPECT_FALSE(state.volumes["v"].mounted);
  EXPECT_EQ(storage->mounts, 0);
  EXPECT_EQ(state.boot_id, "boot-b");
}

TEST_F(reconcile_test, an_imported_ecs_state_counts_as_same_boot) {
  state.imported = true;
  add("ecs", {{"task", 1}}, true);
  state.volumes["ecs"].mountpoint = "/var/lib/ecs/volumes/ecs";
  auto report = run("boot-b", {"/fake/ecs"});
  EXPECT_FALSE(report.new_boot);
  EXPECT_EQ(state.volumes["ecs"].mounts.at("task"), 1u);
  EXPECT_FALSE(state.imported);
}

TEST_F(reconcile_test, an_unknown_boot_id_counts_as_same_boot) {
  add("v", {{"c1", 1}}, true);
  auto report = run("boot-b", {"/fake/v"});
  EXPECT_FALSE(report.new_boot);
  EXPECT_EQ(state.volumes["v"].mounts.size(), 1u);
}

TEST_F(reconcile_test, stray_mounts_of_unknown_volumes_are_unmounted) {
  auto report = run("boot-a", {"/state/volumes/ghost/mnt", "/state/volumes/x/data",
                               "/elsewhere/ghost/mnt"});
  EXPECT_EQ(report.unmounted, 1u);
  EXPECT_EQ(storage->lazy_unmounts, 1);
}
