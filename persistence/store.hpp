#pragma once

#include <map>
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

/// One change to the state: a whole record, or the removal of a name.
struct journal_entry {
  bool erase = false;
  volume_record record; ///< for erase, only record.name matters
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

  /// Bytes currently in the journal (drives compaction).
  virtual size_t journal_bytes() const = 0;
};

} // namespace berth
