#pragma once

#include <chrono>
#include <memory>
#include <thread>
#include <vector>

#include <caf/actor_system.hpp>
#include <caf/response_promise.hpp>

#include "actors/actors.hpp"
#include "core/telemetry/telemetry.hpp"
#include "persistence/store.hpp"

namespace berth {

/// Tuning of the persistence actor.
struct persistence_config {
  /// Compact (a snapshot, then a new journal) once the journal grows past this; the
  /// snapshot is written on a thread of its own while commits go on (berthd
  /// --compact-after-mb).
  size_t compact_after_bytes = 64u << 20;
  /// Where the actor counts appends, fsync and compaction times and the journal's size
  /// (telemetry::persistence). Null: a private one (tests that do not look).
  std::shared_ptr<telemetry> stats;
};

/// State of the persistence actor.
struct persistence_state {
  static inline const char* name = "persistence";
  std::shared_ptr<store> st;
  persistence_config cfg;
  shared_state state;                               ///< what is durable
  std::vector<journal_entry> batch;                 ///< waiting for the next fsync
  std::vector<caf::response_promise> waiting;       ///< one per entry in batch
  std::vector<caf::response_promise> flush_waiters; ///< answered after the next commit
  bool commit_scheduled = false;                    ///< a `commit` is in the mailbox

  /// The compaction begun (store::begin_compaction) and not finished, if `copy` is set:
  /// its snapshot is written from `copy`, the state when it began, on `writer`, while
  /// commits go on into the new journal. A failed write keeps the copy for the retry.
  std::shared_ptr<const shared_state> copy;
  uint64_t generation = 0;
  std::thread writer;       ///< writes the snapshot; joined when it reports back
  bool writing = false;     ///< `writer` runs
  std::chrono::steady_clock::time_point compaction_started;

  persistence_state() = default;
  persistence_state(const persistence_state&) = delete;
  persistence_state& operator=(const persistence_state&) = delete;
  /// An actor stopped while its snapshot is written waits for it (it holds the store).
  ~persistence_state();
};

/// The persistence actor's behaviour: group commit over `st`, starting from `initial`
/// (the state already on disk, its records shared with the registry that lists them). A
/// put/erase is answered only once its record is durable.
persistence_actor::behavior_type persistence(
  persistence_actor::stateful_pointer<persistence_state> self, std::shared_ptr<store> st,
  shared_state initial, persistence_config cfg);

/// Spawns the persistence actor detached: it blocks in fsync, so it owns a thread.
/// @pre `sys` was configured with `add_message_types<caf::id_block::berth>()`.
persistence_actor spawn_persistence(caf::actor_system& sys, std::shared_ptr<store> st,
                                    shared_state initial, persistence_config cfg = {});

} // namespace berth
