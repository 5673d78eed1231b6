#include "persistence/recovery/reconcile.hpp"

#include <filesystem>

#include <gtest/gtest.h>
#include <stdlib.h>

#include "core/telemetry/telemetry.hpp"
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

  int backend_calls() const {
    return storage->mounts + storage->unmounts + storage->lazy_unmounts + storage->stages
           + storage->publishes;
  }

  /// What berthd does at start: the boot decision, the strays, then each volume
  /// (in its actor). Checks that needs_host_work predicts every backend call, since
  /// a volume that needs none reconciles on its actor thread, and that a volume
  /// reconciled_already calls nothing and keeps its record, since it gets no actor.
  reconcile_report run(const std::string& boot, std::set<std::string> on_host) {
    auto report = reconcile_boot(state, boot);
    report.unmounted += unmount_strays(state, on_host, "/state/volumes", *storage);
    for (auto& [name, rec] : state.volumes) {
      bool predicted = needs_host_work(rec, *storage, on_host);
      bool already = reconciled_already(rec, *storage, on_host);
      auto before = backend_calls();
      auto loaded = rec;
      rec = reconcile_volume(rec, *storage, on_host, report);
      EXPECT_EQ(predicted, backend_calls() != before)
        << "needs_host_work must predict whether volume " << name << " calls the backend";
      if (already) {
        EXPECT_EQ(rec, loaded) << "volume " << name << " was said to be reconciled already";
        EXPECT_FALSE(predicted);
      }
    }
    return report;
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
  counter_table actions{reconcile_action_names()};
  count_reconcile_actions(report, actions);
  EXPECT_EQ(actions.value("remounted"), 1u);
  EXPECT_EQ(actions.value("restaged") + actions.value("republished"), 0u);
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

TEST_F(reconcile_test, a_new_boot_clears_the_origins_with_the_counts) {
  state.boot_id = "boot-a";
  add("v", {{"c1", 1}}, true);
  state.volumes["v"].origins = {{"c1", mount_id_origin{"4242@77", 1000}}};
  run("boot-b", {});
  EXPECT_TRUE(state.volumes["v"].mounts.empty());
  EXPECT_TRUE(state.volumes["v"].origins.empty()) << "keys(origins) must stay within keys(mounts)";
}

TEST_F(reconcile_test, same_boot_keeps_the_origins_of_kept_counts) {
  state.boot_id = "boot-a";
  add("v", {{"c1", 1}}, true);
  state.volumes["v"].origins = {{"c1", mount_id_origin{"4242@77", 1000}}};
  storage->fail_mount = true; // the vanished mount cannot be remade: the counts stay anyway
  run("boot-a", {});
  EXPECT_EQ(state.volumes["v"].mounts.at("c1"), 1u);
  EXPECT_EQ(state.volumes["v"].origins.at("c1"), (mount_id_origin{"4242@77", 1000}));
}

TEST_F(reconcile_test, a_record_without_counts_keeps_no_origins) {
  // A damaged record (origins without counts) is made consistent by the reconciliation.
  state.boot_id = "boot-a";
  add("v", {}, false);
  state.volumes["v"].origins = {{"c1", mount_id_origin{"4242@77", 1000}}};
  run("boot-a", {});
  EXPECT_TRUE(state.volumes["v"].origins.empty());
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

// -- CSI staging and publications ------------------------------------------------------

namespace {

/// A CSI volume staged at /stage/NAME on /dev/loop3, published at the given targets.
volume_record staged(const std::string& name, std::vector<std::string> targets) {
  volume_record rec;
  rec.name = name;
  rec.capacity_bytes = 16 * 1024 * 1024;
  rec.staging_path = "/stage/" + name;
  rec.stage_flags = {"noatime"};
  rec.device = "/dev/loop3";
  for (const auto& t : targets) {
    publication how;
    how.readonly = t.find("ro") != std::string::npos;
    rec.published[t] = how;
  }
  return rec;
}

} // namespace

TEST_F(reconcile_test, a_new_boot_clears_staging_and_publications) {
  state.boot_id = "boot-a";
  state.volumes["pvc"] = staged("pvc", {"/pods/a", "/pods/b"});
  auto report = run("boot-b", {});
  EXPECT_TRUE(report.new_boot);
  const auto& rec = state.volumes["pvc"];
  EXPECT_TRUE(rec.staging_path.empty());
  EXPECT_TRUE(rec.stage_flags.empty());
  EXPECT_TRUE(rec.device.empty()) << "a loop device does not survive a reboot";
  EXPECT_TRUE(rec.published.empty());
  EXPECT_FALSE(in_csi_use(rec));
  EXPECT_EQ(rec.capacity_bytes, 16u * 1024 * 1024) << "the volume itself stays";
  EXPECT_EQ(storage->stages + storage->publishes, 0) << "kubelet stages again, not berth";
  EXPECT_EQ(report.cleared, 1u);
}

TEST_F(reconcile_test, same_boot_keeps_a_staging_whose_mount_is_present) {
  state.boot_id = "boot-a";
  auto before = staged("pvc", {"/pods/a"});
  state.volumes["pvc"] = before;
  auto report = run("boot-a", {"/stage/pvc", "/pods/a"});
  EXPECT_EQ(state.volumes["pvc"], before);
  EXPECT_EQ(storage->stages + storage->publishes + storage->unstages + storage->unpublishes, 0);
  EXPECT_EQ(report.remounted + report.failed, 0u);
}

TEST_F(reconcile_test, same_boot_stages_and_publishes_again_what_vanished) {
  state.boot_id = "boot-a";
  state.volumes["pvc"] = staged("pvc", {"/pods/a", "/pods/ro-b"});
  auto report = run("boot-a", {});
  EXPECT_EQ(storage->stages, 1);
  EXPECT_EQ(storage->staged_paths(), std::set<std::string>{"/stage/pvc"});
  EXPECT_EQ(storage->publishes, 2);
  EXPECT_EQ(storage->targets(), (std::set<std::string>{"/pods/a", "/pods/ro-b"}));
  const auto& rec = state.volumes["pvc"];
  EXPECT_EQ(rec.staging_path, "/stage/pvc");
  EXPECT_EQ(rec.device, "/dev/loop1") << "the record follows the device the stage returned";
  EXPECT_EQ(rec.published.size(), 2u);
  EXPECT_TRUE(rec.published.at("/pods/ro-b").readonly);
  EXPECT_EQ(report.remounted, 3u);
  EXPECT_EQ(report.restaged, 1u);
  EXPECT_EQ(report.republished, 2u);
  EXPECT_EQ(report.failed, 0u);
  counter_table actions{reconcile_action_names()};
  count_reconcile_actions(report, actions);
  EXPECT_EQ(actions.value("restaged"), 1u);
  EXPECT_EQ(actions.value("republished"), 2u);
  EXPECT_EQ(actions.value("remounted"), 0u) << "no Docker host mount was remade";
  EXPECT_EQ(actions.value(other_label), 0u);
}

TEST_F(reconcile_test, a_stage_again_uses_the_fs_type_the_stage_asked_for) {
  state.boot_id = "boot-a";
  auto rec = staged("pvc", {});
  rec.options = {{"fsType", "xfs"}};
  rec.stage_fs_type = "ext4"; // NodeStage's capability said ext4: that is what was formatted
  state.volumes["pvc"] = rec;
  run("boot-a", {});
  ASSERT_EQ(storage->stages, 1);
  EXPECT_EQ(storage->last_stage().fs_type, "ext4");
  EXPECT_EQ(state.volumes["pvc"].stage_fs_type, "ext4");
}

TEST_F(reconcile_test, node_paths_with_a_symlinked_parent_match_mountinfo) {
  // /var/lib/kubelet -> /data/kubelet: mountinfo shows the resolved path.
  char tmpl[] = "/tmp/berth-reconcile-XXXXXX";
  ASSERT_NE(::mkdtemp(tmpl), nullptr);
  auto root = std::filesystem::canonical(tmpl).string();
  std::filesystem::create_directories(root + "/data/stage");
  std::filesystem::create_directories(root + "/data/pods");
  std::filesystem::create_symlink(root + "/data", root + "/kubelet");
  state.boot_id = "boot-a";
  auto rec = staged("pvc", {});
  rec.staging_path = root + "/kubelet/stage/pvc";
  rec.published[root + "/kubelet/pods/a"] = publication{};
  state.volumes["pvc"] = rec;
  auto report = run("boot-a", {root + "/data/stage/pvc", root + "/data/pods/a"});
  EXPECT_EQ(storage->stages + storage->publishes, 0)
    << "both are mounted; compared as strings they looked vanished and were mounted again";
  EXPECT_EQ(report.remounted, 0u);
  EXPECT_EQ(state.volumes["pvc"].staging_path, root + "/data/stage/pvc")
    << "the record now spells the path as the adapter and mountinfo do";
  EXPECT_EQ(state.volumes["pvc"].published.count(root + "/data/pods/a"), 1u);
  std::filesystem::remove_all(root);
}

TEST_F(reconcile_test, same_boot_publishes_again_only_the_targets_that_vanished) {
  state.boot_id = "boot-a";
  state.volumes["pvc"] = staged("pvc", {"/pods/a", "/pods/b"});
  run("boot-a", {"/stage/pvc", "/pods/a"});
  EXPECT_EQ(storage->stages, 0);
  EXPECT_EQ(storage->publishes, 1);
  EXPECT_EQ(storage->targets(), std::set<std::string>{"/pods/b"});
  EXPECT_EQ(state.volumes["pvc"].published.size(), 2u);
}

TEST_F(reconcile_test, a_failing_stage_again_clears_the_records_staging) {
  state.boot_id = "boot-a";
  state.volumes["pvc"] = staged("pvc", {"/pods/a"});
  storage->fail_stage = true;
  auto report = run("boot-a", {});
  EXPECT_EQ(storage->stages, 1);
  EXPECT_EQ(storage->publishes, 0) << "nothing to publish from";
  const auto& rec = state.volumes["pvc"];
  EXPECT_TRUE(rec.staging_path.empty());
  EXPECT_TRUE(rec.device.empty());
  EXPECT_TRUE(rec.published.empty());
  EXPECT_EQ(report.failed, 1u);
  EXPECT_EQ(report.restage_failed, 1u);
  counter_table actions{reconcile_action_names()};
  count_reconcile_actions(report, actions);
  EXPECT_EQ(actions.value("restage_failed"), 1u);
  EXPECT_EQ(actions.value("mount_failed"), 0u);
}

TEST_F(reconcile_test, a_failing_publish_again_drops_only_that_publication) {
  state.boot_id = "boot-a";
  state.volumes["pvc"] = staged("pvc", {"/pods/a", "/pods/b"});
  storage->fail_publish = true;
  auto report = run("boot-a", {"/stage/pvc", "/pods/a"});
  const auto& rec = state.volumes["pvc"];
  EXPECT_EQ(rec.staging_path, "/stage/pvc");
  EXPECT_EQ(rec.published.count("/pods/a"), 1u);
  EXPECT_EQ(rec.published.count("/pods/b"), 0u);
  EXPECT_EQ(report.failed, 1u);
  EXPECT_EQ(report.republish_failed, 1u);
  counter_table actions{reconcile_action_names()};
  count_reconcile_actions(report, actions);
  EXPECT_EQ(actions.value("republish_failed"), 1u);
  EXPECT_EQ(actions.value("mount_failed"), 0u);
}

TEST_F(reconcile_test, only_a_volume_whose_record_and_host_agree_is_reconciled_already) {
  add("kept", {{"c1", 1}}, true);
  EXPECT_TRUE(reconciled_already(state.volumes["kept"], *storage, {"/fake/kept"}));
  add("idle", {}, false);
  EXPECT_TRUE(reconciled_already(state.volumes["idle"], *storage, {}));

  EXPECT_FALSE(reconciled_already(state.volumes["kept"], *storage, {}))
    << "its mount vanished: it is mounted again";
  EXPECT_FALSE(reconciled_already(state.volumes["idle"], *storage, {"/fake/idle"}))
    << "a mount no ID holds is undone";
  add("unflagged", {{"c1", 1}}, false);
  EXPECT_FALSE(reconciled_already(state.volumes["unflagged"], *storage, {"/fake/unflagged"}))
    << "the record gains its mount point";
  state.volumes["pvc"] = staged("pvc", {"/pods/a"});
  EXPECT_FALSE(reconciled_already(state.volumes["pvc"], *storage, {"/stage/pvc", "/pods/a"}))
    << "a volume in CSI use always reconciles in its actor";
  EXPECT_EQ(backend_calls(), 0);
}
