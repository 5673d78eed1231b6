// The volume actor's reconciliation with the host when it is spawned from a loaded
// record (actors/volume_reconcile.cpp), driven by the test: its calls run and its clock
// moves when the test says (tests/actors/driver_fixture.hpp).

#include <gtest/gtest.h>

#include "tests/actors/driver_fixture.hpp"

using namespace berth;
using namespace std::chrono_literals;

namespace {

class volume_reconcile_test : public test::volume_driver_fixture {
protected:
  /// Spawns the loaded volume `rec`; the host shows none of berth's mounts.
  void load(const volume_record& rec) {
    spawn(rec, true, std::make_shared<const std::set<std::string>>());
  }

  /// A record whose host mount is gone while berthd was down.
  static volume_record mounted_record(const std::string& name) {
    volume_record rec;
    rec.name = name;
    rec.mounted = true;
    rec.mountpoint = "/fake/" + name;
    return rec;
  }
};

} // namespace

// Reconciliation at start-up: docs/design.md, "Reconciliation at start-up".

TEST_F(volume_reconcile_test, a_loaded_volume_reconciles_with_the_host_before_it_serves) {
  // Counted by a running container, but its host mount vanished while berthd was down.
  auto rec = mounted_record("v2");
  rec.mounts = {{"c1", 1}};
  load(rec);
  ASSERT_TRUE(runner->start_next()) << "the remount starts at once, and hangs";
  // A Mount that arrives meanwhile waits for the reconcile, then is refused as retryable.
  auto h = start(atom::mount_v, std::string{"c2"}, std::string{}, caller{});
  EXPECT_FALSE(answer_of<std::string>(h).given) << "it waits for the reconciliation";
  advance(timeout + 1ms);
  auto refused = answer_of<std::string>(h);
  ASSERT_TRUE(refused.given);
  EXPECT_TRUE(is(refused.err, ec::aborted)) << describe(refused.err);
  EXPECT_NE(describe(refused.err).find("reconcile started at"), std::string::npos)
    << describe(refused.err);
  return_held(); // the remount lands: the volume reconciles again and serves
  run_all_calls();
  auto counted = ask<std::string>(atom::mount_v, std::string{"c2"}, std::string{}, caller{});
  EXPECT_FALSE(counted.err) << "once reconciled, a Mount is counted: " << describe(counted.err);
  // (The fake's mounts never show in /proc/self/mountinfo, so the second reconcile
  // mounts it again; tests/e2e/slow_start_e2e.sh checks "exactly once" on real mounts.)
  EXPECT_TRUE(record().mounted);
  EXPECT_EQ(record().mounts.at("c2"), 1U);
}

TEST_F(volume_reconcile_test, a_loaded_volume_that_needs_no_host_work_reconciles_without_the_executor) {
  load(mounted_record("v3")); // mounted by no ID and not on the host: only the record is wrong
  EXPECT_EQ(runner->waiting(), 0U) << "no backend call";
  EXPECT_FALSE(record().mounted) << "the record is corrected";
  EXPECT_EQ(storage->mounts + storage->unmounts + storage->lazy_unmounts, 0);
  EXPECT_EQ(disk->records.count("v3"), 1U) << "the corrected record is durable";
}

TEST_F(volume_reconcile_test,
       a_reconciled_record_that_cannot_be_saved_still_lets_the_volume_serve) {
  disk->fail = true;
  load(mounted_record("v3"));
  // Queued behind the reconciliation; refused as "not reconciled" if it left the
  // volume unreconciled (an unknown ID's Unmount saves nothing).
  auto unmount = ask<atom::ok>(atom::unmount_v, std::string{"c9"});
  EXPECT_FALSE(unmount.err) << describe(unmount.err);
  EXPECT_TRUE(record().mounted) << "what was not saved is not committed";
  EXPECT_EQ(disk->writes, 0);
}

TEST_F(volume_reconcile_test, a_reconciliation_that_changes_nothing_saves_nothing) {
  volume_record rec;
  rec.name = "v3"; // neither counted nor mounted: the host agrees
  load(rec);
  EXPECT_FALSE(ask<atom::ok>(atom::unmount_v, std::string{"c9"}).err);
  EXPECT_EQ(disk->writes, 0);
}

TEST_F(volume_reconcile_test, a_hung_reconcile_is_pending_then_uncertain_until_it_returns) {
  // Counted, but the host mount vanished: reconciliation mounts again, and hangs.
  auto rec = mounted_record("old");
  rec.backend = "local";
  rec.owner = record_owner::docker;
  rec.mounts = {{"c1", 1}};
  load(rec);
  ASSERT_TRUE(runner->start_next());
  EXPECT_EQ(stats->volumes.reconcile_pending.value(), 1);
  EXPECT_EQ(stats->volumes.uncertain.value(), 0);
  auto calls = [&] {
    return stats->backends.call_duration.at("local", "reconcile").snapshot().count;
  };

  // Past the backend timeout: reconciliation counts as finished, the volume as uncertain.
  advance(timeout + 1ms);
  EXPECT_EQ(stats->volumes.uncertain.value(), 1);
  EXPECT_EQ(stats->volumes.reconcile_pending.value(), 0);
  EXPECT_EQ(stats->backends.timeouts.value("local"), 1U);
  EXPECT_EQ(stats->reconcile_actions.value("reconcile_failed"), 1U);
  EXPECT_EQ(calls(), 0U) << "not returned yet";
  auto hung = stats->health.of("old");
  ASSERT_EQ(hung.size(), 1U) << "the hang is the volume's condition";
  EXPECT_EQ(hung[0].reason, abnormal_reason::call_hung);
  EXPECT_NE(hung[0].message.find("did not return within"), std::string::npos) << hung[0].message;

  // It returns 200 ms later: certain again, and its duration is counted then, whole.
  advance(200ms);
  return_held();
  EXPECT_EQ(stats->volumes.uncertain.value(), 0);
  EXPECT_TRUE(stats->health.of("old").empty()) << "returned: healthy again";
  EXPECT_EQ(calls(), 1U);
  EXPECT_DOUBLE_EQ(stats->backends.call_duration.at("local", "reconcile").snapshot().sum, 0.301)
    << "a late call counts with its whole duration, on the volume's clock";
  run_all_calls();
  EXPECT_GE(stats->reconcile_actions.value("remounted"), 1U);
  EXPECT_TRUE(record().mounted);
}
