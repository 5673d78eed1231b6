// Publishes and unpublishes that share a turn (actors/volume_paths.cpp), driven by the
// test (tests/actors/driver_fixture.hpp): the ones waiting behind a running publish run
// as one backend call and one saved record, and each caller gets its own outcome.

#include <gtest/gtest.h>

#include "tests/actors/driver_fixture.hpp"
#include "tests/actors/volume_csi_fixture.hpp"

using namespace berth;
using namespace std::chrono_literals;

namespace {

class volume_paths_test : public test::volume_driver_fixture {
protected:
  /// A request sent and not yet answered (what start() returns).
  using handle = decltype(std::declval<caf::scoped_actor&>()->request(
    std::declval<volume_actor&>(), caf::infinite, atom::publish_v, publish_request{}));

  void SetUp() override {
    spawn_csi_created();
    auto staged = ask<atom::ok>(atom::stage_v, test::csi_stage());
    ASSERT_TRUE(staged.given && !staged.err) << describe(staged.err);
  }

  handle start_publish(const std::string& target) {
    return start(atom::publish_v, test::csi_publish(target));
  }
  handle start_unpublish(const std::string& target) { return start(atom::unpublish_v, target); }

  /// Publishes at /pods/a, holding its call running, and queues publishes at `behind`:
  /// the requests, that at /pods/a first.
  std::vector<handle> queue_behind_a_held_publish(const std::vector<std::string>& behind) {
    std::vector<handle> out;
    out.push_back(start_publish("/pods/a"));
    EXPECT_TRUE(runner->start_next()) << "the first publish runs";
    for (auto& target : behind) {
      out.push_back(start_publish(target));
    }
    EXPECT_EQ(runner->waiting(), 0U) << "the others wait for the first";
    return out;
  }

  std::set<std::string> recorded_targets() {
    std::set<std::string> out;
    for (auto& [target, how] : record().published) {
      out.insert(target);
    }
    return out;
  }
};

} // namespace

TEST_F(volume_paths_test, publishes_waiting_behind_one_share_one_call_and_one_saved_record) {
  auto behind = queue_behind_a_held_publish({"/pods/b", "/pods/c"});
  int writes = disk->writes;
  return_held();
  EXPECT_FALSE(answer_of<atom::ok>(behind[0]).err);
  EXPECT_EQ(disk->writes, writes + 1) << "the first publish saved its record";
  ASSERT_EQ(runner->waiting(), 1U) << "b and c: one backend call";
  run_call();
  for (size_t i = 1; i < behind.size(); ++i) {
    auto& h = behind[i];
    auto done = answer_of<atom::ok>(h);
    ASSERT_TRUE(done.given);
    EXPECT_FALSE(done.err) << describe(done.err);
  }
  EXPECT_EQ(disk->writes, writes + 2) << "b and c: one saved record";
  EXPECT_EQ(storage->publishes, 3);
  EXPECT_EQ(recorded_targets(), (std::set<std::string>{"/pods/a", "/pods/b", "/pods/c"}));
  EXPECT_EQ(test::record_on(*disk, "pvc-1").published.size(), 3U) << "durable, all three";
}

TEST_F(volume_paths_test, a_change_that_fails_in_a_shared_turn_fails_alone) {
  storage->make_foreign("/pods/c");
  auto behind = queue_behind_a_held_publish({"/pods/b", "/pods/c", "/pods/d"});
  return_held();
  run_all_calls();
  EXPECT_FALSE(answer_of<atom::ok>(behind[1]).err);
  auto refused = answer_of<atom::ok>(behind[2]);
  ASSERT_TRUE(refused.given);
  EXPECT_TRUE(is(refused.err, ec::failed_precondition)) << describe(refused.err);
  EXPECT_FALSE(answer_of<atom::ok>(behind[3]).err) << "the one after it still succeeds";
  EXPECT_EQ(recorded_targets(), (std::set<std::string>{"/pods/a", "/pods/b", "/pods/d"}));
}

TEST_F(volume_paths_test, a_shared_turn_whose_record_cannot_be_saved_undoes_every_change) {
  auto behind = queue_behind_a_held_publish({"/pods/b", "/pods/c"});
  return_held();
  EXPECT_FALSE(answer_of<atom::ok>(behind[0]).err);
  disk->fail = true;
  run_all_calls(); // the shared call, then its undo
  for (size_t i = 1; i < behind.size(); ++i) {
    auto& h = behind[i];
    auto done = answer_of<atom::ok>(h);
    ASSERT_TRUE(done.given);
    EXPECT_TRUE(is(done.err, ec::persist_failure)) << describe(done.err);
  }
  EXPECT_EQ(storage->targets(), (std::set<std::string>{"/pods/a"})) << "b and c unpublished again";
  EXPECT_EQ(recorded_targets(), (std::set<std::string>{"/pods/a"}));
}

TEST_F(volume_paths_test, a_shared_turn_that_lands_after_its_timeout_takes_its_publishes_away) {
  auto behind = queue_behind_a_held_publish({"/pods/b", "/pods/c"});
  return_held();
  EXPECT_FALSE(answer_of<atom::ok>(behind[0]).err);
  ASSERT_TRUE(runner->start_next()) << "the shared call runs";
  advance(timeout + 1ms);
  for (size_t i = 1; i < behind.size(); ++i) {
    auto& h = behind[i];
    auto done = answer_of<atom::ok>(h);
    ASSERT_TRUE(done.given) << "answered at the deadline";
    EXPECT_TRUE(is(done.err, ec::timeout)) << describe(done.err);
  }
  return_held(); // it succeeds, after its callers were told it failed
  run_all_calls();
  EXPECT_EQ(storage->targets(), (std::set<std::string>{"/pods/a"}))
    << "the publishes the record lacks are taken away again";
  EXPECT_EQ(recorded_targets(), (std::set<std::string>{"/pods/a"}));
}

TEST_F(volume_paths_test, unpublishes_share_a_turn_and_a_target_the_record_lacks_is_swept) {
  for (auto target : {"/pods/b", "/pods/c"}) {
    auto done = ask<atom::ok>(atom::publish_v, test::csi_publish(target));
    ASSERT_FALSE(done.err) << describe(done.err);
  }
  auto held = queue_behind_a_held_publish({});
  auto b = start_unpublish("/pods/b");
  auto c = start_unpublish("/pods/c");
  auto never = start_unpublish("/pods/never");
  int unpublishes = storage->unpublishes;
  return_held();
  ASSERT_EQ(runner->waiting(), 1U) << "three unpublishes: one backend call";
  run_call();
  for (auto* h : {&b, &c, &never}) {
    auto done = answer_of<atom::ok>(*h);
    ASSERT_TRUE(done.given);
    EXPECT_FALSE(done.err) << describe(done.err);
  }
  EXPECT_FALSE(answer_of<atom::ok>(held[0]).err);
  EXPECT_EQ(storage->unpublishes, unpublishes + 3) << "the unrecorded target is swept too";
  EXPECT_EQ(recorded_targets(), (std::set<std::string>{"/pods/a"}));
  EXPECT_EQ(storage->targets(), (std::set<std::string>{"/pods/a"}));
}

TEST_F(volume_paths_test, a_publish_already_done_or_refused_is_answered_without_a_call) {
  auto done = ask<atom::ok>(atom::publish_v, test::csi_publish("/pods/b"));
  ASSERT_FALSE(done.err) << describe(done.err);
  auto held = queue_behind_a_held_publish({});
  auto same = start_publish("/pods/b"); // published there the same way already: done
  auto elsewhere = test::csi_publish("/pods/c");
  elsewhere.staging_path = "/stage/elsewhere";
  auto wrong = start(atom::publish_v, elsewhere); // not where the volume is staged
  return_held();
  EXPECT_EQ(runner->waiting(), 0U) << "nothing left to do on the host";
  EXPECT_EQ(storage->publishes, 2) << "b's first publish and a's: none for the two behind a";
  EXPECT_FALSE(answer_of<atom::ok>(held[0]).err);
  EXPECT_FALSE(answer_of<atom::ok>(same).err);
  auto refused = answer_of<atom::ok>(wrong);
  ASSERT_TRUE(refused.given);
  EXPECT_TRUE(is(refused.err, ec::failed_precondition)) << describe(refused.err);
  EXPECT_EQ(recorded_targets(), (std::set<std::string>{"/pods/a", "/pods/b"}));
}
