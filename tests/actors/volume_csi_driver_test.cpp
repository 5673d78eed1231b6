// The CSI transitions of a volume actor when a call holds the volume or lands after its
// deadline, driven by the test (tests/actors/driver_fixture.hpp): a publish that waits
// for a stage in progress, a stage that lands late and is undone, a retry beside a hung
// stage (docs/design.md, "A hung call blocks only its own volume"), and the sweep of a path
// the record does not hold on a backend that cannot sweep.

#include <gtest/gtest.h>

#include "tests/actors/driver_fixture.hpp"
#include "tests/actors/volume_csi_fixture.hpp"

using namespace berth;
using namespace std::chrono_literals;

namespace {

class volume_csi_driver_test : public test::volume_driver_fixture {
protected:
  void SetUp() override { spawn_csi_created(); }

  /// Sends a stage and runs the messages, but not its call.
  auto start_stage() { return start(atom::stage_v, test::csi_stage()); }

  answer<atom::ok> stage() { return ask<atom::ok>(atom::stage_v, test::csi_stage()); }

  /// Times out the stage `h` holds running; returns its answer.
  template <class Handle>
  answer<atom::ok> time_out(Handle& h) {
    advance(timeout + 1ms);
    return answer_of<atom::ok>(h);
  }
};

} // namespace

TEST_F(volume_csi_driver_test, a_publish_waits_for_a_stage_in_progress_and_then_succeeds) {
  auto staged = start_stage();
  ASSERT_TRUE(runner->start_next()) << "the stage is running";
  auto published = start(atom::publish_v, test::csi_publish("/pods/a"));
  EXPECT_EQ(runner->waiting(), 0U) << "the publish must wait for the stage in progress";
  EXPECT_EQ(storage->publishes, 0);
  return_held();
  auto stage_done = answer_of<atom::ok>(staged);
  ASSERT_TRUE(stage_done.given);
  EXPECT_FALSE(stage_done.err) << describe(stage_done.err);
  ASSERT_EQ(runner->waiting(), 1U) << "the publish starts once the stage is committed";
  run_call();
  auto publish_done = answer_of<atom::ok>(published);
  ASSERT_TRUE(publish_done.given);
  EXPECT_FALSE(publish_done.err) << "the publish ran after the stage: "
                                 << describe(publish_done.err);
  EXPECT_EQ(storage->publishes, 1);
  EXPECT_EQ(record().published.count("/pods/a"), 1U);
}

TEST_F(volume_csi_driver_test, a_stage_that_lands_after_its_timeout_is_undone) {
  auto h = start_stage();
  runner->start_next();
  auto first = time_out(h);
  ASSERT_TRUE(first.given);
  EXPECT_TRUE(is(first.err, ec::timeout)) << describe(first.err);
  return_held(); // the stage succeeds, after its caller was told it failed
  ASSERT_EQ(runner->waiting(), 1U) << "a staging the record lacks is undone, in turn";
  run_call();
  EXPECT_EQ(storage->sweeps, 1);
  EXPECT_EQ(storage->attached(), "") << "and its device detached: no staging uses it";
  EXPECT_TRUE(storage->staged_paths().empty());
  EXPECT_TRUE(record().staging_path.empty());
}

TEST_F(volume_csi_driver_test, a_retry_while_a_stage_hangs_starts_no_second_stage) {
  auto h = start_stage();
  runner->start_next();
  ASSERT_TRUE(is(time_out(h).err, ec::timeout));
  auto r = start_stage();
  auto retry = answer_of<atom::ok>(r);
  ASSERT_TRUE(retry.given) << "refused without moving the clock";
  EXPECT_TRUE(is(retry.err, ec::aborted)) << describe(retry.err);
  EXPECT_NE(describe(retry.err).find("stage started at"), std::string::npos) << describe(retry.err);
  EXPECT_EQ(runner->waiting(), 0U) << "no second stage while the first hangs";
  return_held(); // the first stage lands late and is undone: the record lacks it
  run_call();
  EXPECT_EQ(storage->sweeps, 1)
    << "undone by a sweep with the record as it is then (it keeps a device that a recorded "
       "staging uses)";
  EXPECT_FALSE(stage().err) << "once the late call settled, the retry stages";
  EXPECT_EQ(record().staging_path, "/stage/pvc-1");
  EXPECT_EQ(storage->stages, 2) << "one stage at a time: the first, then the retry";
}

TEST_F(volume_csi_driver_test, an_unrecorded_path_a_backend_cannot_sweep_is_done) {
  storage->cannot_sweep = true;
  auto out = ask<atom::ok>(atom::unstage_v, std::string{"/stage/never-recorded"});
  ASSERT_TRUE(out.given);
  EXPECT_FALSE(out.err) << "a backend without the call has nothing of its own there: "
                        << describe(out.err);
  EXPECT_EQ(storage->sweeps, 1) << "the sweep was asked for";
  EXPECT_TRUE(record().staging_path.empty()) << "and the record did not change";
}
