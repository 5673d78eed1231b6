#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include <caf/error.hpp>
#include <caf/expected.hpp>

#include "core/volume_record.hpp"

namespace berth {

/// The whole durable state of berthd.
struct state_snapshot {
  std::map<std::string, volume_record> volumes;
  /// /proc/sys/kernel/random/boot_id when the state was written; empty when unknown.
  std::string boot_id;
  /// True when loaded from an imported amazon-ecs-volume-plugin state (treated as same boot).
  bool imported = false;
};

/// The durable state as the persistence actor keeps it: each record is the one the volume
/// that committed it holds, shared, never changed in place (docs/benchmarks.md, "Restart
/// with 10,000 volumes: fewer mount table reads, one copy of each record").
struct shared_state {
  std::map<std::string, std::shared_ptr<const volume_record>> volumes;
  std::string boot_id; ///< as state_snapshot::boot_id
};

/// `state`'s records, moved into shared ones.
shared_state share(state_snapshot&& state);

/// A copy of `state`, for a store that compacts only from a state_snapshot.
state_snapshot copy_of(const shared_state& state);

/// One change to the state: a whole record, or the removal of a name. A record is shared
/// with the volume that saves it, not copied.
struct journal_entry {
  std::shared_ptr<const volume_record> record; ///< the whole new record; null for an erasure
  std::string erased;                          ///< the name an erasure removes

  static journal_entry put(std::shared_ptr<const volume_record> rec) {
    return {std::move(rec), {}};
  }
  static journal_entry put(volume_record rec) {
    return put(std::make_shared<const volume_record>(std::move(rec)));
  }
  static journal_entry erasure(std::string name) { return {nullptr, std::move(name)}; }

  bool erases() const { return record == nullptr; }
  /// The volume it changes.
  const std::string& name() const { return erases() ? erased : record->name; }
};

/// Durable storage of the state, behind an interface so tests can inject faults.
class store {
public:
  virtual ~store() = default;

  /// Loads snapshot + journal (a torn tail record is dropped).
  virtual caf::expected<state_snapshot> load() = 0;

  /// Appends entries to the journal and fsyncs before returning.
  virtual caf::error append(const std::vector<journal_entry>& entries) = 0;

  /// Writes `state` as the new snapshot (temp, fsync, rename, fsync dir) and
  /// truncates the journal.
  virtual caf::error compact(const state_snapshot& state) = 0;

  /// Bytes currently in the journal appends go to (drives compaction).
  virtual size_t journal_bytes() const = 0;

  // -- compaction off the commit path -------------------------------------------------
  // compact() in three steps, so appends go on while the snapshot is written:
  // begin_compaction() and finish_compaction() on the thread that appends,
  // write_snapshot() on any other, at the same time as appends. The defaults, for
  // stores with one journal only, run compact() in write_snapshot().

  /// Appends go to a new journal from now on; returns the generation the snapshot
  /// of the state as it is now (everything appended so far) must be written as.
  virtual caf::expected<uint64_t> begin_compaction() {
    return uint64_t{0};
  }

  /// Writes `state` (the state at begin_compaction()) as the snapshot of `generation`.
  /// Safe beside append(); may be retried with the same state after a failure.
  virtual caf::error write_snapshot(const shared_state& state, uint64_t /* generation */) {
    return compact(copy_of(state));
  }

  /// The snapshot of `generation` is in place: the journal begun by begin_compaction()
  /// replaces the old one. When it fails, the next append finishes it.
  virtual caf::error finish_compaction(uint64_t /* generation */) {
    return {};
  }
};

} // namespace berth
