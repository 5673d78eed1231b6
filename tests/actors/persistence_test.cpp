#include "actors/persistence.hpp"

#include <filesystem>
#include <functional>
#include <thread>
#include <vector>

#include <caf/actor_system.hpp>
#include <caf/actor_system_config.hpp>
#include <caf/scoped_actor.hpp>
#include <gtest/gtest.h>

#include "actors/type_ids.hpp"
#include "core/errors.hpp"
#include "core/limits.hpp"
#include "tests/support/latch.hpp"
#include "tests/persistence/fake_stores.hpp"
#include "tests/persistence/records.hpp"
#include "tests/persistence/temp_dir.hpp"

namespace berth {
namespace {

using test::make_record;
using test::temp_dir;

/// `rec` as a volume sends it to be saved: shared.
shared_record saved(volume_record rec) {
  return std::make_shared<const volume_record>(std::move(rec));
}

namespace fs = std::filesystem;

/// An actor system config that knows berth's message types.
struct berth_config : caf::actor_system_config {
  berth_config() {
    add_message_types<caf::id_block::berth>();
  }
};

/// An actor system with berth's types, and the persistence actor under test.
class persistence_fixture : public ::testing::Test {
protected:
  persistence_fixture() : sys_(cfg_) {
  }

  ~persistence_fixture() override {
    if (actor_) {
      caf::anon_send_exit(actor_, caf::exit_reason::user_shutdown);
    }
  }

  void spawn(std::shared_ptr<store> st, state_snapshot initial = {},
             persistence_config cfg = {}) {
    actor_ = spawn_persistence(sys_, std::move(st), share(std::move(initial)), std::move(cfg));
  }

  /// Sends one message and waits for the reply: empty error means ok.
  template <class... Ts>
  caf::error ask(Ts&&... xs) {
    caf::scoped_actor self{sys_};
    caf::error result;
    self->request(actor_, caf::infinite, std::forward<Ts>(xs)...)
      .receive([](atom::ok) {}, [&](caf::error& err) { result = std::move(err); });
    return result;
  }

  /// Puts a record "first" on a thread of its own and returns once its commit is held
  /// inside the store's append: what is sent from now on waits for the next batch. The
  /// caller releases the store and joins the thread.
  std::thread hold_first_commit(test::counting_store& st) {
    st.hold_next();
    std::thread first([this] { EXPECT_FALSE(ask(atom::put_v, saved(make_record("first")))); });
    st.wait_held();
    return first;
  }

  /// `threads` scoped actors at once, each putting `per_thread` records one after another.
  /// Returns the errors of all replies (empty ones for ok).
  std::vector<caf::error> put_concurrently(int threads, int per_thread,
                                           const std::string& prefix) {
    std::vector<caf::error> results(static_cast<size_t>(threads * per_thread));
    std::vector<std::thread> workers;
    for (int t = 0; t < threads; ++t) {
      workers.emplace_back([&, t] {
        caf::scoped_actor self{sys_};
        for (int i = 0; i < per_thread; ++i) {
          auto n = static_cast<size_t>(t * per_thread + i);
          auto& slot = results[n];
          slot = make_error(ec::internal, "no reply");
          self
            ->request(actor_, caf::infinite, atom::put_v,
                      saved(make_record(prefix + std::to_string(n), i % 3)))
            .receive([&](atom::ok) { slot = caf::error{}; },
                     [&](caf::error& err) { slot = std::move(err); });
        }
      });
    }
    for (auto& w : workers) {
      w.join();
    }
    return results;
  }

  /// `threads` scoped actors at once, each sending its share of `recs` without waiting;
  /// `all_sent` runs once every put is in the actor's mailbox, then the replies are read.
  /// Returns the errors of all replies (empty ones for ok), in the order of `recs`.
  std::vector<caf::error> put_pipelined(const std::vector<volume_record>& recs, int threads,
                                        const std::function<void()>& all_sent) {
    std::vector<caf::error> results(recs.size());
    test::latch sent{static_cast<size_t>(threads)};
    std::vector<std::thread> workers;
    for (int t = 0; t < threads; ++t) {
      workers.emplace_back([&, t] {
        caf::scoped_actor self{sys_};
        std::vector<size_t> mine;
        std::vector<decltype(self->request(actor_, caf::infinite, atom::put_v, saved(recs[0])))>
          replies;
        for (size_t n = static_cast<size_t>(t); n < recs.size();
             n += static_cast<size_t>(threads)) {
          results[n] = make_error(ec::internal, "no reply");
          mine.push_back(n);
          replies.push_back(self->request(actor_, caf::infinite, atom::put_v, saved(recs[n])));
        }
        sent.count_down();
        for (size_t k = 0; k < replies.size(); ++k) {
          auto& slot = results[mine[k]];
          replies[k].receive([&](atom::ok) { slot = caf::error{}; },
                             [&](caf::error& err) { slot = std::move(err); });
        }
      });
    }
    sent.wait();
    all_sent();
    for (auto& w : workers) {
      w.join();
    }
    return results;
  }

  berth_config cfg_;
  caf::actor_system sys_;
  persistence_actor actor_;
};

TEST_F(persistence_fixture, group_commit_answers_every_put_with_few_fsyncs) {
  temp_dir tmp;
  auto dir = tmp / "state";
  auto st = std::make_shared<test::counting_store>(dir, std::chrono::milliseconds(0));
  ASSERT_TRUE(st->load());
  spawn(st);
  // The first commit is held inside its append while 20 clients send 200 puts: all of
  // them wait in the mailbox, so they must become one batch, one append.
  auto first = hold_first_commit(*st);
  std::vector<volume_record> recs;
  for (int n = 0; n < 200; ++n) {
    recs.push_back(make_record("v" + std::to_string(n), n % 10 % 3));
  }
  auto results = put_pipelined(recs, 20, [&] { st->release(); });
  first.join();
  for (size_t i = 0; i < results.size(); ++i) {
    EXPECT_FALSE(results[i]) << "put " << i << ": " << describe(results[i]);
  }
  RecordProperty("appends", static_cast<int>(st->appends.load()));
  EXPECT_EQ(st->entries_written.load(), 201u);
  EXPECT_EQ(st->appends.load(), 2u) << "group commit batches the puts that waited";
  EXPECT_FALSE(ask(atom::flush_v));
  file_store fresh{dir};
  auto loaded = fresh.load();
  ASSERT_TRUE(loaded);
  ASSERT_EQ(loaded->volumes.size(), 201u);
  EXPECT_EQ(loaded->volumes.at("v37"), make_record("v37", 37 % 10 % 3));
}

TEST_F(persistence_fixture, erase_and_flush_are_durable) {
  temp_dir tmp;
  auto dir = tmp / "state";
  auto st = std::make_shared<file_store>(dir);
  ASSERT_TRUE(st->load());
  spawn(st);
  EXPECT_FALSE(ask(atom::flush_v)); // nothing pending
  EXPECT_FALSE(ask(atom::put_v, saved(make_record("a", 1))));
  EXPECT_FALSE(ask(atom::put_v, saved(make_record("b"))));
  EXPECT_FALSE(ask(atom::erase_v, std::string{"a"}));
  EXPECT_FALSE(ask(atom::flush_v));
  auto loaded = file_store{dir}.load();
  ASSERT_TRUE(loaded);
  ASSERT_EQ(loaded->volumes.size(), 1u);
  EXPECT_EQ(loaded->volumes.count("b"), 1u);
}

TEST_F(persistence_fixture, keeps_the_record_it_was_given_not_a_copy_until_it_is_erased) {
  temp_dir tmp;
  auto st = std::make_shared<file_store>(tmp / "state");
  ASSERT_TRUE(st->load());
  spawn(st);
  auto rec = saved(make_record("a", 1));
  EXPECT_FALSE(ask(atom::put_v, rec));
  EXPECT_EQ(rec.use_count(), 2) << "the durable state holds this record itself";
  EXPECT_FALSE(ask(atom::erase_v, std::string{"a"}));
  EXPECT_EQ(rec.use_count(), 1) << "an erased record is let go";
}

TEST_F(persistence_fixture, compacts_past_the_threshold_keeping_boot_id) {
  temp_dir tmp;
  auto dir = tmp / "state";
  auto st = std::make_shared<test::counting_store>(dir, std::chrono::milliseconds(0));
  ASSERT_TRUE(st->load());
  state_snapshot initial;
  initial.boot_id = "boot-1";
  initial.volumes["pre"] = make_record("pre", 1);
  persistence_config cfg;
  cfg.compact_after_bytes = 300;
  spawn(st, initial, cfg);
  for (int i = 0; i < 6; ++i) {
    EXPECT_FALSE(ask(atom::put_v, saved(make_record("v" + std::to_string(i), i))));
  }
  EXPECT_FALSE(ask(atom::erase_v, std::string{"v0"}));
  EXPECT_FALSE(ask(atom::flush_v)); // a compaction after the last commit has finished
  EXPECT_GE(st->compactions.load(), 1u);
  EXPECT_TRUE(fs::exists(dir + "/snapshot.json"));
  EXPECT_LE(st->journal_bytes(), cfg.compact_after_bytes);
  EXPECT_EQ(fs::file_size(dir + "/journal.log"), st->journal_bytes());
  auto loaded = file_store{dir}.load();
  ASSERT_TRUE(loaded);
  EXPECT_EQ(loaded->boot_id, "boot-1");
  ASSERT_EQ(loaded->volumes.size(), 6u);
  EXPECT_EQ(loaded->volumes.at("pre"), make_record("pre", 1));
  EXPECT_EQ(loaded->volumes.at("v5"), make_record("v5", 5));
  EXPECT_EQ(loaded->volumes.count("v0"), 0u);
}

TEST_F(persistence_fixture, commits_go_on_while_the_snapshot_is_written) {
  temp_dir tmp;
  auto dir = tmp / "state";
  auto st = std::make_shared<test::counting_store>(dir, std::chrono::milliseconds(0));
  ASSERT_TRUE(st->load());
  persistence_config cfg;
  cfg.compact_after_bytes = 300;
  spawn(st, {}, cfg);
  st->hold_snapshot();
  for (int i = 0; i < 4; ++i) {
    EXPECT_FALSE(ask(atom::put_v, saved(make_record("before" + std::to_string(i), 1))));
  }
  // Past the threshold: the snapshot's write is held inside the store.
  st->wait_snapshot_held();
  EXPECT_TRUE(fs::exists(dir + "/journal.next")) << "appends switched to the next journal";
  for (int i = 0; i < 10; ++i) {
    EXPECT_FALSE(ask(atom::put_v, saved(make_record("during" + std::to_string(i), 2))))
      << "a commit waited for the snapshot";
  }
  EXPECT_FALSE(ask(atom::erase_v, std::string{"before0"}));
  st->release_snapshot();
  EXPECT_FALSE(ask(atom::flush_v)); // answered once the snapshot is written
  EXPECT_GE(st->compactions.load(), 1u);
  EXPECT_FALSE(fs::exists(dir + "/journal.next")) << "the next journal became journal.log";
  auto loaded = file_store{dir}.load();
  ASSERT_TRUE(loaded);
  EXPECT_EQ(loaded->volumes.size(), 13u);
  EXPECT_EQ(loaded->volumes.count("before0"), 0u);
  EXPECT_EQ(loaded->volumes.at("before3"), make_record("before3", 1));
  EXPECT_EQ(loaded->volumes.at("during9"), make_record("during9", 2));
}

TEST_F(persistence_fixture, counts_appends_fsyncs_batches_journal_size_and_compactions) {
  temp_dir tmp;
  auto dir = tmp / "state";
  // A slow fsync, so that puts from several clients share one append.
  auto st = std::make_shared<test::counting_store>(dir, std::chrono::milliseconds(20));
  ASSERT_TRUE(st->load());
  persistence_config cfg;
  cfg.stats = std::make_shared<telemetry>(std::vector<std::string>{"local"});
  auto& counted = cfg.stats->persistence;
  spawn(st, {}, cfg);
  for (const auto& err : put_concurrently(4, 5, "v")) {
    EXPECT_FALSE(err) << describe(err);
  }
  EXPECT_FALSE(ask(atom::erase_v, std::string{"v0"}));
  EXPECT_FALSE(ask(atom::flush_v));
  EXPECT_EQ(counted.journal_appends.value(), 21u) << "one per put or erase";
  auto batches = counted.group_commit_records.snapshot();
  EXPECT_EQ(batches.count, st->appends.load()) << "one observation per append";
  EXPECT_DOUBLE_EQ(batches.sum, 21.0) << "of the records each append wrote";
  EXPECT_LT(batches.count, 21u) << "some puts shared an fsync";
  auto fsyncs = counted.fsync_duration.snapshot();
  EXPECT_EQ(fsyncs.count, st->appends.load());
  EXPECT_GE(fsyncs.sum, 0.020 * static_cast<double>(fsyncs.count));
  EXPECT_GE(counted.last_fsync_seconds.load(), 0.020);
  EXPECT_EQ(counted.journal_bytes.value(), static_cast<int64_t>(st->journal_bytes()));
  EXPECT_GT(counted.journal_bytes.value(), 0);
  EXPECT_EQ(counted.snapshot_duration.snapshot().count, 0u) << "no compaction yet";
}

TEST_F(persistence_fixture, a_compaction_is_timed_and_shrinks_the_journal_gauge) {
  temp_dir tmp;
  auto dir = tmp / "state";
  auto st = std::make_shared<test::counting_store>(dir, std::chrono::milliseconds(0));
  ASSERT_TRUE(st->load());
  persistence_config cfg;
  cfg.compact_after_bytes = 300;
  cfg.stats = std::make_shared<telemetry>(std::vector<std::string>{"local"});
  spawn(st, {}, cfg);
  for (int i = 0; i < 6; ++i) {
    EXPECT_FALSE(ask(atom::put_v, saved(make_record("v" + std::to_string(i), i))));
  }
  EXPECT_FALSE(ask(atom::flush_v));
  ASSERT_GE(st->compactions.load(), 1u);
  EXPECT_EQ(cfg.stats->persistence.snapshot_duration.snapshot().count, st->compactions.load());
  EXPECT_EQ(cfg.stats->persistence.journal_bytes.value(),
            static_cast<int64_t>(st->journal_bytes()))
    << "the size after the last compaction, not before it";
  EXPECT_LE(cfg.stats->persistence.journal_bytes.value(), 300);
}

TEST_F(persistence_fixture, failing_store_fails_every_waiting_put_and_keeps_state) {
  auto st = std::make_shared<test::failing_store>();
  state_snapshot initial;
  initial.boot_id = "boot-1";
  initial.volumes["pre"] = make_record("pre");
  persistence_config cfg;
  cfg.compact_after_bytes = 0; // compact after every successful commit: shows the state
  spawn(st, initial, cfg);
  auto results = put_concurrently(8, 3, "lost");
  for (const auto& err : results) {
    EXPECT_EQ(err, ec::persist_failure) << describe(err);
    EXPECT_NE(describe(err).find("/fake/journal.log"), std::string::npos);
  }
  EXPECT_FALSE(ask(atom::flush_v));
  EXPECT_EQ(ask(atom::erase_v, std::string{"pre"}), ec::persist_failure);
  {
    std::lock_guard<std::mutex> guard{st->mtx};
    EXPECT_TRUE(st->compacted.empty());
    st->failing = false;
  }
  EXPECT_FALSE(ask(atom::put_v, saved(make_record("after"))));
  // Compaction runs after the replies of its commit; the next message waits for it.
  EXPECT_FALSE(ask(atom::flush_v));
  std::lock_guard<std::mutex> guard{st->mtx};
  ASSERT_EQ(st->compacted.size(), 1u);
  const auto& state = st->compacted.front();
  EXPECT_EQ(state.boot_id, "boot-1");
  ASSERT_EQ(state.volumes.size(), 2u) << "no failed put or erase was applied";
  EXPECT_EQ(state.volumes.count("pre"), 1u);
  EXPECT_EQ(state.volumes.count("after"), 1u);
}

TEST_F(persistence_fixture, removed_state_dir_fails_puts_and_nothing_is_durable) {
  temp_dir tmp;
  auto dir = tmp / "state";
  auto st = std::make_shared<file_store>(dir);
  ASSERT_TRUE(st->load());
  spawn(st);
  EXPECT_FALSE(ask(atom::put_v, saved(make_record("kept"))));
  fs::remove_all(dir);
  auto results = put_concurrently(4, 2, "lost");
  for (const auto& err : results) {
    EXPECT_EQ(err, ec::persist_failure) << describe(err);
    EXPECT_NE(describe(err).find("is gone"), std::string::npos) << describe(err);
  }
  auto loaded = file_store{dir}.load();
  ASSERT_TRUE(loaded);
  EXPECT_TRUE(loaded->volumes.empty());
}

TEST_F(persistence_fixture, a_record_too_large_for_the_journal_fails_alone_in_its_batch) {
  temp_dir tmp;
  auto dir = tmp / "state";
  auto st = std::make_shared<test::counting_store>(dir, std::chrono::milliseconds(0));
  ASSERT_TRUE(st->load());
  spawn(st);
  // The first commit is held in its append: everything below joins the next batch.
  auto first = hold_first_commit(*st);
  auto big = make_record("huge");
  big.options["o"] = std::string(size_t{limits::max_frame_bytes}, 'x');
  std::vector<volume_record> recs{big};
  for (size_t i = 0; i < 5; ++i) {
    recs.push_back(make_record("small" + std::to_string(i), 1));
  }
  auto results = put_pipelined(recs, 6, [&] { st->release(); });
  first.join();
  caf::error big_result = results[0];
  std::vector<caf::error> small(results.begin() + 1, results.end());
  EXPECT_EQ(big_result, ec::out_of_range) << describe(big_result);
  EXPECT_NE(describe(big_result).find("huge"), std::string::npos) << describe(big_result);
  for (size_t i = 0; i < small.size(); ++i) {
    EXPECT_FALSE(small[i]) << "small" << i << " shared a batch with the refused record: "
                           << describe(small[i]);
  }
  EXPECT_FALSE(ask(atom::flush_v));
  auto loaded = file_store{dir}.load();
  ASSERT_TRUE(loaded);
  EXPECT_EQ(loaded->volumes.size(), 6u);
  EXPECT_EQ(loaded->volumes.count("huge"), 0u);
}

} // namespace
} // namespace berth
