// The volume as one machine (actors/machine/volume_machine.hpp), fed events and the
// times they happened: the invariants the engine once kept by comment are kept by its
// methods, and each is written down here with no actor and no clock.

#include "actors/machine/volume_machine.hpp"

#include <gtest/gtest.h>

#include "tests/actors/machine_records.hpp"

using namespace berth;
using namespace std::chrono_literals;
using test::named;

namespace {

using tx = record_transaction;

const volume_machine::clock::time_point t0{};

/// A transition named `what` that saves the record with a first mount of id c89a, and
/// undoes its side effect with nothing when the record cannot be saved.
running_transition a_mount(const std::string& what = "mount (id c89a)") {
  auto words = std::make_shared<transition_words>();
  words->what = what;
  running_transition r;
  r.words = words;
  r.tx = tx{{record_change::save, false, true}};
  r.apply = [](const volume_record& before) {
    auto next = before;
    next.mounts["c89a"] = 1;
    return next;
  };
  r.undo = [](const volume_record&) { return work_plan{}; };
  return r;
}

/// A step of `owner` that `who` admits, named `what`.
queued_step a_step(const std::string& what, admits who = admits::existing,
                   record_owner owner = record_owner::docker) {
  queued_step step;
  step.what = what;
  step.who = who;
  step.owner = owner;
  return step;
}

/// A backend call of `kind` that nobody waits for.
call_slot::submitted a_call(backend_call kind) {
  return call_slot::submitted{kind, "2026-12-07T01:00:00Z", nullptr, [](caf::error) {}, {}};
}

struct fixture : ::testing::Test {
  volume_gauges gauges{{"local"}};

  /// The existing volume v1 (`reconciles_first`: loaded from state), calls of 30 s.
  volume_machine machine(bool reconciles_first = false) {
    return volume_machine{committed_record{test::shared_named("v1"), true, gauges}, 30s,
                          reconciles_first};
  }

  /// Makes a call of `kind` hang in `m`: it began at t0 and was still running at its
  /// deadline. Returns its token.
  static uint64_t hang_a_call(volume_machine& m, backend_call kind) {
    auto token = m.reserve_call();
    m.begin_call(token, a_call(kind), t0);
    auto fired = m.timer_fired(t0 + 30s);
    EXPECT_TRUE(std::holds_alternative<call_slot::expired>(fired));
    EXPECT_TRUE(m.hang(std::get<call_slot::expired>(std::move(fired)), t0 + 30s));
    return token;
  }
};

using volume_machine_test = fixture;

} // namespace

TEST_F(volume_machine_test, a_second_transition_is_handed_back_while_one_runs) {
  auto m = machine();
  EXPECT_FALSE(m.begin(a_mount()));
  auto refused = m.begin(a_mount("unmount (id c89a)"));
  ASSERT_TRUE(refused) << "a second transition must not take the running one's place";
  EXPECT_EQ(refused->words->what, "unmount (id c89a)");
  EXPECT_EQ(m.running().words->what, "mount (id c89a)");
  m.end();
  EXPECT_FALSE(m.transition_running());
  EXPECT_FALSE(m.begin(a_mount("unmount (id c89a)"))) << "once it ended, the next one begins";
}

TEST_F(volume_machine_test, a_step_does_not_end_while_its_transition_runs) {
  auto m = machine();
  m.push(a_step("mount (id c89a)"));
  m.push(a_step("mount (id d00d)"));
  ASSERT_TRUE(m.next());
  ASSERT_FALSE(m.begin(a_mount()));
  auto err = m.finish();
  ASSERT_TRUE(err);
  EXPECT_TRUE(is(err, ec::internal));
  EXPECT_NE(describe(err).find("mount (id c89a) was still running"), std::string::npos)
    << describe(err);
  EXPECT_FALSE(m.next()) << "the step keeps its turn";
  m.end();
  EXPECT_FALSE(m.finish());
  auto second = m.next();
  ASSERT_TRUE(second);
  EXPECT_EQ(second->what, "mount (id d00d)");
}

TEST_F(volume_machine_test, only_a_durable_save_writes_the_record) {
  auto m = machine();
  ASSERT_FALSE(m.begin(a_mount()));
  auto step = m.work_done({});
  ASSERT_TRUE(std::holds_alternative<tx::save>(step));
  EXPECT_TRUE(m.record()->mounts.empty()) << "the work's success commits nothing";
  auto end = m.stored({});
  ASSERT_TRUE(std::holds_alternative<tx::ended>(end));
  EXPECT_EQ(std::get<tx::ended>(end).how, ending::committed);
  EXPECT_EQ(m.record()->mounts.at("c89a"), 1U);
}

TEST_F(volume_machine_test, a_save_that_fails_leaves_the_record_and_asks_for_the_undo) {
  auto m = machine();
  ASSERT_FALSE(m.begin(a_mount()));
  ASSERT_TRUE(std::holds_alternative<tx::save>(m.work_done({})));
  auto step = m.stored(make_error(ec::persist_failure, "state directory is gone"));
  ASSERT_TRUE(std::holds_alternative<tx::undo>(step));
  EXPECT_EQ(std::get<tx::undo>(step).unsaved.get().mounts.at("c89a"), 1U);
  EXPECT_TRUE(m.record()->mounts.empty());
  auto end = m.undone();
  ASSERT_TRUE(std::holds_alternative<tx::ended>(end));
  EXPECT_EQ(std::get<tx::ended>(end).how, ending::unsaved);
  EXPECT_TRUE(is(std::get<tx::ended>(end).err, ec::persist_failure));
  EXPECT_TRUE(m.record()->mounts.empty());
}

TEST_F(volume_machine_test, a_failed_work_ends_with_nothing_saved) {
  auto m = machine();
  ASSERT_FALSE(m.begin(a_mount()));
  auto end = m.work_done(make_error(ec::backend_failure, "mount(2): EPERM"));
  ASSERT_TRUE(std::holds_alternative<tx::ended>(end));
  EXPECT_EQ(std::get<tx::ended>(end).how, ending::failed);
  EXPECT_TRUE(m.record()->mounts.empty());
}

TEST_F(volume_machine_test, a_loaded_volume_serves_nothing_before_its_first_reconciliation) {
  auto m = machine(true);
  auto err = m.refusal(a_step("mount (id c89a)"), t0);
  ASSERT_TRUE(err);
  EXPECT_TRUE(is(err, ec::aborted));
  EXPECT_NE(describe(err).find("not reconciled with the host yet"), std::string::npos);
  EXPECT_TRUE(m.first_reconcile_over());
  EXPECT_FALSE(m.first_reconcile_over()) << "counted out of reconcile_pending once";
  EXPECT_TRUE(m.refusal(a_step("mount (id c89a)"), t0)) << "over is not reconciled";
  m.reconciled_with_host();
  EXPECT_FALSE(m.refusal(a_step("mount (id c89a)"), t0));
}

TEST_F(volume_machine_test, guards_refuse_another_owner_and_an_absent_volume) {
  auto m = machine();
  auto err = m.refusal(a_step("stage at /p", admits::existing, record_owner::csi), t0);
  ASSERT_TRUE(err);
  EXPECT_TRUE(is(err, ec::not_found)) << describe(err);
  volume_machine fresh{committed_record{test::shared_named("v2"), false, gauges}, 30s, false};
  err = fresh.refusal(a_step("mount (id c89a)"), t0);
  ASSERT_TRUE(err);
  EXPECT_NE(describe(err).find("no such volume: v2"), std::string::npos) << describe(err);
  EXPECT_FALSE(fresh.refusal(a_step("create", admits::creation), t0));
}

TEST_F(volume_machine_test, a_hung_call_refuses_creation_and_every_call_but_the_one_beside_it) {
  auto m = machine();
  hang_a_call(m, backend_call::remove);
  EXPECT_FALSE(m.certain());
  auto err = m.refusal(a_step("create", admits::creation), t0 + 45s);
  ASSERT_TRUE(err) << "a hung remove may still change what exists";
  EXPECT_TRUE(m.refused_beside_hung(err));
  EXPECT_NE(describe(err).find("hung for 15 s"), std::string::npos) << describe(err);
  EXPECT_TRUE(m.may_begin_call("mount", false, t0 + 45s));
  EXPECT_FALSE(m.may_begin_call("lazy unmount", true, t0 + 45s));
  EXPECT_FALSE(m.refusal(a_step("mount (id c89a)"), t0 + 45s))
    << "a request that needs no call is judged against the record";
}

TEST_F(volume_machine_test, a_hung_call_that_returns_makes_the_volume_certain_again) {
  auto m = machine();
  auto token = hang_a_call(m, backend_call::unmount);
  ASSERT_FALSE(m.certain());
  auto report = m.call_done(token);
  ASSERT_TRUE(std::holds_alternative<call_slot::returned_late>(report));
  EXPECT_TRUE(std::get<call_slot::returned_late>(report).certain_again);
  EXPECT_TRUE(m.certain());
  EXPECT_FALSE(m.may_begin_call("mount", false, t0 + 60s));
}
