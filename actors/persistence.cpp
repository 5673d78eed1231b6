#include "actors/persistence.hpp"

// Group commit:
//
//   put/erase ──▶ batch + promise ──(first one sends)──▶ self: commit
//                                                          │ store::append(batch): ONE fsync
//                                                          ▼
//                                  ok (or the error) to every promise of the batch
//
// The `commit` message queues behind everything already in the mailbox, so all of it joins
// the batch; whatever arrives while the fsync blocks forms the next batch.
//
// Compaction, past --compact-after-mb of journal, never holds a commit up:
//
//   commit ─▶ store::begin_compaction (appends go to a new journal) ─▶ copy of the state
//     ─▶ writer thread: store::write_snapshot(copy) ──atom::compacted──▶ self
//     ─▶ store::finish_compaction (the new journal replaces the old)
//   commits meanwhile append to the new journal as usual.

#include <chrono>
#include <exception>
#include <thread>

#include <caf/typed_event_based_actor.hpp>
#include <spdlog/spdlog.h>

#include "core/errors.hpp"
#include "core/free_memory.hpp"
#include "persistence/journal_format.hpp"

namespace berth {

namespace {

using self_ptr = persistence_actor::stateful_pointer<persistence_state>;

caf::error internal_error(const char* where, const std::exception& e) {
  return make_error(ec::internal, std::string{"persistence: "} + where + " threw: " + e.what());
}

caf::response_promise enqueue(self_ptr self, journal_entry entry) {
  auto& st = self->state;
  auto rp = self->make_response_promise();
  st.waiting.push_back(rp);
  st.batch.push_back(std::move(entry));
  if (!st.commit_scheduled) {
    st.commit_scheduled = true;
    self->send(caf::actor_cast<persistence_actor>(self), atom::commit_v);
  }
  return rp;
}

/// Answers the flush waiters, unless a snapshot is being written: then they wait for it
/// (a graceful stop flushes, and leaves no snapshot half written).
void answer_flushers(self_ptr self) {
  auto& st = self->state;
  if (st.writing) {
    return;
  }
  auto flushers = std::move(st.flush_waiters);
  st.flush_waiters.clear();
  for (auto& rp : flushers) {
    rp.deliver(atom::ok_v);
  }
}

/// Answers every waiting promise with `err`, or ok when `err` is empty; then the flush
/// waiters.
void answer_all(self_ptr self, const caf::error& err) {
  auto& st = self->state;
  auto waiting = std::move(st.waiting);
  st.waiting.clear();
  st.batch.clear();
  for (auto& rp : waiting) {
    if (err) {
      rp.deliver(err);
    } else {
      rp.deliver(atom::ok_v);
    }
  }
  answer_flushers(self);
}

using clock = std::chrono::steady_clock;

double seconds_since(clock::time_point t0) {
  return std::chrono::duration<double>(clock::now() - t0).count();
}

/// One store::append of `entries`, timed and counted (telemetry::persistence).
caf::error append(self_ptr self, const std::vector<journal_entry>& entries) {
  auto& st = self->state;
  auto& stats = st.cfg.stats->persistence;
  auto t0 = clock::now();
  auto err = st.st->append(entries);
  auto took = seconds_since(t0);
  stats.fsync_duration.observe(took);
  stats.last_fsync_seconds.store(took, std::memory_order_relaxed);
  if (!err) {
    stats.journal_appends.add(entries.size());
    stats.group_commit_records.observe(static_cast<double>(entries.size()));
  }
  stats.journal_bytes.set(static_cast<int64_t>(st.st->journal_bytes()));
  return err;
}

/// Starts the writer thread on the compaction's copy; it reports with atom::compacted.
void start_writer(self_ptr self) {
  auto& st = self->state;
  if (st.writer.joinable()) {
    st.writer.join(); // reported back already: this returns at once
  }
  auto hdl = caf::actor_cast<persistence_actor>(self);
  st.writer = std::thread([store = st.st, copy = st.copy, generation = st.generation, hdl] {
    caf::error err;
    try {
      err = store->write_snapshot(*copy, generation);
    } catch (const std::exception& e) {
      err = make_error(ec::internal, std::string{"writing the snapshot threw: "} + e.what());
    }
    caf::anon_send(hdl, atom::compacted_v, generation, std::move(err));
  });
  st.writing = true;
}

/// Past the threshold, begins a compaction: the journal switches at once and the snapshot
/// of a copy of the state is written on another thread, so no commit waits for it. After a
/// failed write, tries the same copy again.
void maybe_compact(self_ptr self) {
  auto& st = self->state;
  if (st.writing) {
    return;
  }
  if (st.copy) {
    start_writer(self);
    return;
  }
  if (st.st->journal_bytes() <= st.cfg.compact_after_bytes) {
    return;
  }
  st.compaction_started = clock::now();
  auto generation = st.st->begin_compaction();
  if (!generation) {
    // Not fatal: the journal still holds everything; try again after the next commit.
    spdlog::error("compaction failed: {}", describe(generation.error()));
    return;
  }
  // The state now is exactly what the journal switched away from holds. A copy of its
  // pointers: the records themselves are never changed in place.
  st.copy = std::make_shared<const shared_state>(st.state);
  st.generation = *generation;
  st.cfg.stats->persistence.journal_bytes.set(static_cast<int64_t>(st.st->journal_bytes()));
  start_writer(self);
}

/// The writer thread reported: the new journal replaces the old, or the write is retried
/// after the next commit.
void on_compacted(self_ptr self, uint64_t generation, const caf::error& written) {
  auto& st = self->state;
  if (st.writer.joinable()) {
    st.writer.join();
  }
  st.writing = false;
  st.cfg.stats->persistence.snapshot_duration.observe(seconds_since(st.compaction_started));
  if (written) {
    spdlog::error("compaction failed: {}", describe(written));
  } else {
    if (auto err = st.st->finish_compaction(generation)) {
      // Appends still go to the new journal, which is valid; the next one finishes it.
      spdlog::error("compaction: switching journals failed: {}", describe(err));
    }
    spdlog::info("state compacted ({} volume(s))", st.copy->volumes.size());
    st.copy.reset();
    // The copy and the snapshot's text were megabytes, freed just now.
    release_free_memory();
    // What was committed meanwhile may have passed the threshold again.
    maybe_compact(self);
  }
  st.cfg.stats->persistence.journal_bytes.set(static_cast<int64_t>(st.st->journal_bytes()));
  if (!st.commit_scheduled) {
    answer_flushers(self);
  }
}

/// Appends each entry of the batch on its own and answers its promise with its result.
void commit_one_by_one(self_ptr self) {
  auto& st = self->state;
  auto batch = std::move(st.batch);
  auto waiting = std::move(st.waiting);
  st.batch.clear();
  st.waiting.clear();
  for (size_t i = 0; i < batch.size(); ++i) {
    if (auto err = append(self, {batch[i]})) {
      spdlog::error("state change of volume {} not saved: {}", batch[i].name(), describe(err));
      waiting[i].deliver(err);
      continue;
    }
    detail::apply_entry(st.state, batch[i]);
    waiting[i].deliver(atom::ok_v);
  }
  answer_all(self, {}); // the flush waiters
  maybe_compact(self);
}

void commit(self_ptr self) {
  auto& st = self->state;
  st.commit_scheduled = false;
  if (st.batch.empty()) {
    answer_all(self, {});
    return;
  }
  if (auto err = append(self, st.batch)) {
    if (is(err, ec::out_of_range) && st.batch.size() > 1) {
      // One record too large for the journal refuses the whole write; the others of the
      // batch are innocent: write them one by one so that only that one fails.
      commit_one_by_one(self);
      return;
    }
    spdlog::error("{} state change(s) not saved: {}", st.batch.size(), describe(err));
    answer_all(self, err);
    return;
  }
  for (const auto& entry : st.batch) {
    detail::apply_entry(st.state, entry);
  }
  answer_all(self, {});
  maybe_compact(self);
}

} // namespace

persistence_state::~persistence_state() {
  if (writer.joinable()) {
    writer.join();
  }
}

persistence_actor::behavior_type persistence(
  persistence_actor::stateful_pointer<persistence_state> self, std::shared_ptr<store> st,
  shared_state initial, persistence_config cfg) {
  self->state.st = std::move(st);
  self->state.state = std::move(initial);
  self->state.cfg = cfg;
  if (!self->state.cfg.stats) {
    self->state.cfg.stats = std::make_shared<telemetry>(std::vector<std::string>{});
  }
  self->state.cfg.stats->persistence.journal_bytes.set(
    static_cast<int64_t>(self->state.st->journal_bytes()));
  return {
    [self](atom::put, shared_record& rec) -> caf::result<atom::ok> {
      if (!rec) {
        return make_error(ec::internal, "persistence: put without a record");
      }
      try {
        return enqueue(self, journal_entry::put(std::move(rec)));
      } catch (const std::exception& e) {
        return internal_error("put", e);
      }
    },
    [self](atom::erase, std::string& name) -> caf::result<atom::ok> {
      try {
        return enqueue(self, journal_entry::erasure(std::move(name)));
      } catch (const std::exception& e) {
        return internal_error("erase", e);
      }
    },
    [self](atom::flush) -> caf::result<atom::ok> {
      try {
        auto& st = self->state;
        if (!st.commit_scheduled && !st.writing) {
          return atom::ok_v;
        }
        auto rp = self->make_response_promise();
        st.flush_waiters.push_back(rp);
        return rp;
      } catch (const std::exception& e) {
        return internal_error("flush", e);
      }
    },
    [self](atom::compacted, uint64_t generation, caf::error& err) {
      try {
        on_compacted(self, generation, err);
      } catch (const std::exception& e) {
        spdlog::error("compaction: {}", describe(internal_error("compacted", e)));
      }
    },
    [self](atom::commit) {
      try {
        commit(self);
      } catch (const std::exception& e) {
        // Every promise is still answered; the in-memory state may lag the journal until
        // the next load, which only errs on the side of not reporting durability.
        answer_all(self, internal_error("commit", e));
      }
    },
  };
}

persistence_actor spawn_persistence(caf::actor_system& sys, std::shared_ptr<store> st,
                                    shared_state initial, persistence_config cfg) {
  return sys.spawn<caf::detached>(persistence, std::move(st), std::move(initial), cfg);
}

} // namespace berth
