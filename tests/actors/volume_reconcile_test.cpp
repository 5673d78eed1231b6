// The volume actor's reconciliation with the host when it is spawned from a loaded
// record (actors/volume_reconcile.cpp), against the fakes of tests/actors/fakes.hpp.

#include "actors/volume.hpp"

#include <gtest/gtest.h>

#include "core/errors.hpp"
#include "tests/actors/fakes.hpp"

using namespace berth;
using namespace std::chrono_literals;

namespace {

/// A volume "v1" whose calls time out after 500 ms; a test spawns others from records.
class volume_reconcile_test : public test::volume_fixture {
protected:
  void SetUp() override {
    spawn_volume("v1", 500ms);
  }
};

uint8_t code(const caf::error& err) {
  return err.code();
}

} // namespace

// Reconciliation at start-up: docs/design.md, "Reconciliation at start-up".

TEST_F(volume_reconcile_test, a_loaded_volume_reconciles_with_the_host_before_it_serves) {
  // Counted by a running container, but its host mount vanished while berthd was down.
  self->send_exit(vol, caf::exit_reason::user_shutdown);
  volume_record rec;
  rec.name = "v2";
  rec.mounts = {{"c1", 1}};
  rec.mounted = true;
  rec.mountpoint = "/fake/v2";
  storage->hang_mount = true; // the remount hangs until released
  auto persistence = ts.sys->spawn(test::fake_persistence, disk);
  auto env = test::env_of(storage, exec, persistence, 300ms,
                          std::make_shared<const std::set<std::string>>());
  vol = ts.sys->spawn(volume, env, rec, true);
  ASSERT_TRUE(eventually([&] { return storage->mounts == 1; })) << "the remount starts at once";
  // A Mount that arrives meanwhile waits for the reconcile, then is refused as retryable.
  auto err = test::call<std::string>(self, vol, atom::mount_v,
                                     std::string{"c2"}, std::string{}, caller{});
  ASSERT_TRUE(err);
  EXPECT_EQ(code(err), static_cast<uint8_t>(ec::aborted)) << describe(err);
  EXPECT_NE(describe(err).find("reconcile started at"), std::string::npos) << describe(err);
  storage->release(); // the remount lands: the volume reconciles again and serves
  bool counted = false;
  ASSERT_TRUE(eventually([&] {
    counted = counted || !test::call<std::string>(self, vol, atom::mount_v,
                                                  std::string{"c2"}, std::string{}, caller{});
    return counted;
  })) << "once reconciled, a Mount is counted";
  // (The fake's mounts never show in /proc/self/mountinfo, so the second reconcile
  // mounts it again; tests/e2e/slow_start_e2e.sh checks "exactly once" on real mounts.)
  EXPECT_TRUE(get().mounted);
  EXPECT_EQ(get().mounts.at("c2"), 1u);
}

TEST_F(volume_reconcile_test, a_loaded_volume_that_needs_no_host_work_reconciles_without_the_executor) {
  self->send_exit(vol, caf::exit_reason::user_shutdown);
  volume_record rec;
  rec.name = "v3";
  rec.mounted = true; // mounted by no ID and not on the host: only the record is wrong
  rec.mountpoint = "/fake/v3";
  auto persistence = ts.sys->spawn(test::fake_persistence, disk);
  auto env = test::env_of(storage, exec, persistence, 300ms,
                          std::make_shared<const std::set<std::string>>());
  vol = ts.sys->spawn(volume, env, rec, true);
  EXPECT_TRUE(eventually([&] { return !get().mounted; })) << "the record is corrected";
  EXPECT_EQ(storage->mounts + storage->unmounts + storage->lazy_unmounts, 0);
  std::lock_guard<std::mutex> guard{disk->mtx};
  EXPECT_EQ(disk->records.count("v3"), 1u) << "the corrected record is durable";
}

TEST_F(volume_reconcile_test, a_reconciled_record_that_cannot_be_saved_still_lets_the_volume_serve) {
  self->send_exit(vol, caf::exit_reason::user_shutdown);
  volume_record rec;
  rec.name = "v3";
  rec.mounted = true; // mounted by no ID and not on the host: only the record is wrong
  rec.mountpoint = "/fake/v3";
  disk->fail = true;
  auto persistence = ts.sys->spawn(test::fake_persistence, disk);
  auto env = test::env_of(storage, exec, persistence, 300ms,
                          std::make_shared<const std::set<std::string>>());
  vol = ts.sys->spawn(volume, env, rec, true);
  // Queued behind the reconciliation; refused as "not reconciled" if it left the
  // volume unreconciled (an unknown ID's Unmount saves nothing).
  auto err = test::call<atom::ok>(self, vol, atom::unmount_v, std::string{"c9"});
  EXPECT_FALSE(err) << describe(err);
  EXPECT_TRUE(get().mounted) << "what was not saved is not committed";
  EXPECT_EQ(disk->writes, 0);
}

TEST_F(volume_reconcile_test, a_reconciliation_that_changes_nothing_saves_nothing) {
  self->send_exit(vol, caf::exit_reason::user_shutdown);
  volume_record rec;
  rec.name = "v3"; // neither counted nor mounted: the host agrees
  auto persistence = ts.sys->spawn(test::fake_persistence, disk);
  auto env = test::env_of(storage, exec, persistence, 300ms,
                          std::make_shared<const std::set<std::string>>());
  vol = ts.sys->spawn(volume, env, rec, true);
  EXPECT_FALSE(test::call<atom::ok>(self, vol, atom::unmount_v, std::string{"c9"}));
  EXPECT_EQ(disk->writes, 0);
}
