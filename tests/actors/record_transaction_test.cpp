// The record of one transition (actors/machine/record_transaction.hpp), fed the work's
// outcome and the store's and the undo's answers: the committed record changes only
// once the change is durable, and an unsaved side effect is undone before the end.

#include "actors/machine/record_transaction.hpp"

#include <gtest/gtest.h>

#include "tests/actors/machine_records.hpp"

using namespace berth;
using test::named;

namespace {

using tx = record_transaction;

/// The record after a first mount of id c89a.
volume_record mounted(const volume_record& before) {
  auto next = before;
  next.mounts["c89a"] = 1;
  return next;
}

caf::error disk_gone() {
  return make_error(ec::persist_failure, "state directory is gone");
}

struct fixture : ::testing::Test {
  volume_gauges gauges{{"local"}};
  committed_record rec{test::shared_named("v1"), true, gauges};
};

using record_transaction_test = fixture;

} // namespace

TEST_F(record_transaction_test, a_saved_change_is_committed_only_once_the_store_answers) {
  tx t{{record_change::save, false, true}};
  auto step = t.work_succeeded(rec, mounted);
  ASSERT_TRUE(std::holds_alternative<tx::save>(step));
  EXPECT_EQ(std::get<tx::save>(step).next->mounts.at("c89a"), 1U);
  EXPECT_TRUE(rec->mounts.empty()) << "nothing is committed before it is durable";
  auto end = t.persisted({}, rec);
  ASSERT_TRUE(std::holds_alternative<tx::ended>(end));
  EXPECT_EQ(std::get<tx::ended>(end).how, ending::committed);
  EXPECT_FALSE(std::get<tx::ended>(end).err);
  EXPECT_EQ(rec->mounts.at("c89a"), 1U);
}

TEST_F(record_transaction_test, the_committed_record_is_the_one_the_store_was_given) {
  tx t{{record_change::save, false, true}};
  auto step = t.work_succeeded(rec, mounted);
  ASSERT_TRUE(std::holds_alternative<tx::save>(step));
  auto given = std::get<tx::save>(step).next;
  t.persisted({}, rec);
  EXPECT_EQ(rec.shared(), given) << "one record, shared by the volume and the store";
}

TEST_F(record_transaction_test, a_failed_work_ends_without_asking_for_the_record) {
  tx t{{record_change::save, false, true}};
  auto end = t.work_failed(make_error(ec::backend_failure, "mount(2): EPERM"));
  ASSERT_TRUE(std::holds_alternative<tx::ended>(end));
  EXPECT_EQ(std::get<tx::ended>(end).how, ending::failed);
  EXPECT_TRUE(is(std::get<tx::ended>(end).err, ec::backend_failure));
  EXPECT_TRUE(rec->mounts.empty());
}

TEST_F(record_transaction_test,
       an_unsaved_change_is_undone_before_the_end_and_keeps_the_store_error) {
  tx t{{record_change::save, false, true}};
  t.work_succeeded(rec, mounted);
  auto step = t.persisted(disk_gone(), rec);
  ASSERT_TRUE(std::holds_alternative<tx::undo>(step)) << "the mount is undone first";
  EXPECT_EQ(std::get<tx::undo>(step).unsaved.get().mounts.at("c89a"), 1U);
  EXPECT_TRUE(rec->mounts.empty()) << "the unsaved record is never committed";
  auto end = t.undone();
  ASSERT_TRUE(std::holds_alternative<tx::ended>(end));
  EXPECT_EQ(std::get<tx::ended>(end).how, ending::unsaved);
  EXPECT_TRUE(is(std::get<tx::ended>(end).err, ec::persist_failure))
    << "the caller learns why it was not saved, not how the undo went";
}

TEST_F(record_transaction_test, an_unsaved_change_without_an_undo_ends_unsaved_at_once) {
  tx t{{record_change::save, false, false}};
  t.work_succeeded(rec, mounted);
  auto end = t.persisted(disk_gone(), rec);
  ASSERT_TRUE(std::holds_alternative<tx::ended>(end));
  EXPECT_EQ(std::get<tx::ended>(end).how, ending::unsaved);
  EXPECT_TRUE(rec->mounts.empty());
}

TEST_F(record_transaction_test, a_reconciliation_that_finds_the_record_true_saves_nothing) {
  tx t{{record_change::save_if_changed, false, false}};
  auto end = t.work_succeeded(rec, [](const volume_record& before) { return before; });
  ASSERT_TRUE(std::holds_alternative<tx::ended>(end));
  EXPECT_EQ(std::get<tx::ended>(end).how, ending::committed);
  tx changed{{record_change::save_if_changed, false, false}};
  EXPECT_TRUE(std::holds_alternative<tx::save>(changed.work_succeeded(rec, mounted)));
}

TEST_F(record_transaction_test, a_work_that_only_reads_never_asks_for_the_record) {
  tx t{{record_change::none, false, false}};
  bool asked = false;
  auto end = t.work_succeeded(rec, [&](const volume_record& before) {
    asked = true;
    return before;
  });
  ASSERT_TRUE(std::holds_alternative<tx::ended>(end));
  EXPECT_EQ(std::get<tx::ended>(end).how, ending::committed);
  EXPECT_FALSE(asked);
}

TEST_F(record_transaction_test, a_removal_forgets_the_record_once_its_erasure_is_durable) {
  tx t{{record_change::erase, false, false}};
  auto step = t.work_succeeded(rec, mounted);
  ASSERT_TRUE(std::holds_alternative<tx::erase>(step));
  EXPECT_EQ(std::get<tx::erase>(step).name, "v1");
  EXPECT_TRUE(rec.exists()) << "still there until the erasure is durable";
  EXPECT_EQ(t.pending().name, "v1") << "the logs name the record that was";
  t.persisted({}, rec);
  EXPECT_FALSE(rec.exists());
  EXPECT_EQ(rec->name, "v1");
}

TEST_F(record_transaction_test, a_removal_whose_erasure_fails_keeps_the_volume) {
  tx t{{record_change::erase, false, false}};
  t.work_succeeded(rec, mounted);
  auto end = t.persisted(disk_gone(), rec);
  EXPECT_EQ(std::get<tx::ended>(end).how, ending::unsaved);
  EXPECT_TRUE(rec.exists());
}

TEST_F(record_transaction_test, a_creation_makes_the_volume_exist_when_it_commits) {
  committed_record fresh{test::shared_named("v2"), false, gauges};
  tx t{{record_change::save, true, true}};
  t.work_succeeded(fresh, mounted);
  EXPECT_FALSE(fresh.exists());
  t.persisted({}, fresh);
  EXPECT_TRUE(fresh.exists());
}

TEST_F(record_transaction_test,
       an_input_out_of_turn_ends_the_transition_as_a_bug_and_commits_nothing) {
  tx t{{record_change::save, false, true}};
  auto early = t.persisted({}, rec);
  ASSERT_TRUE(std::holds_alternative<tx::ended>(early));
  EXPECT_TRUE(is(std::get<tx::ended>(early).err, ec::internal));
  EXPECT_TRUE(rec->mounts.empty());
  tx twice{{record_change::save, false, true}};
  twice.work_succeeded(rec, mounted);
  twice.persisted({}, rec);
  auto again = twice.persisted({}, rec);
  EXPECT_TRUE(is(std::get<tx::ended>(again).err, ec::internal)) << "a second answer is a bug";
  EXPECT_TRUE(is(std::get<tx::ended>(twice.undone()).err, ec::internal));
}
