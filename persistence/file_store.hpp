#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <sys/stat.h>

#include "persistence/journal_reserve.hpp"
#include "persistence/store.hpp"

namespace berth {

/// The durable state on disk, in one folder:
/// - `journal.log`: records `[u32 length][u32 crc32][JSON]`, little-endian. The first is
///   {"op":"journal","generation":N}, the snapshot generation the journal continues; the
///   others are {"op":"put","record":{...}} or {"op":"erase","name":"..."}. A record is at
///   most limits::max_frame_bytes: larger ones are refused when written, and a length field
///   beyond it is damage when read;
/// - `snapshot.json`: {"version":2,"generation":N,"boot_id":"...","volumes":[record,...]};
///   every compaction writes generation N+1, then empties the journal;
/// - `reserve`: preallocated room for appends and compaction on a full filesystem.
///
/// A journal of an older generation than the snapshot (a crash came between a compaction's
/// rename and its cut) is not replayed: the snapshot already holds all of it, and may hold
/// decisions made since (reconciliation clears counts at a new boot). A journal of a newer
/// generation means the snapshot was lost; load refuses it.
///
/// Loading reads the snapshot, then replays the journal up to the first record that is
/// torn or fails its checksum, and cuts the journal there so appends continue cleanly.
/// - A bad *tail* is a write that a crash interrupted; its caller never got a reply, so it
///   is dropped with a warning.
/// - A bad record in the *middle* (a good record follows it, or its checksum matches but
///   it cannot be read) is damage to acknowledged state. Replay still stops there: applying
///   later records over a hole could resurrect or mix volumes, and a prefix of the history
///   is a state that really existed. The error is logged and the dropped bytes are kept in
///   `journal.log.damaged-<unix time>` for a human to inspect.
/// With neither a snapshot nor journal records, an older berth's `state.json` (in the
/// folder or its parent) is read and written as the first snapshot.
class file_store : public store {
public:
  /// `dir` is created (mode 0700) at the first load() or append() when missing.
  /// `reserve_bytes` is the size of `dir/reserve` (0: none); load() creates it. When a
  /// write fails for lack of space, part of it is released and the write retried.
  explicit file_store(std::string dir, uint64_t reserve_bytes = 0);
  ~file_store() override;

  file_store(const file_store&) = delete;
  file_store& operator=(const file_store&) = delete;

  /// Snapshot + journal replay (see the class comment); may cut off a bad journal tail.
  caf::expected<state_snapshot> load() override;

  /// One write of all entries, one fdatasync. On failure the journal is cut back, so a
  /// later load never sees entries whose caller got the error. Fails with persist_failure
  /// when the journal path no longer names the open file (state directory removed).
  caf::error append(const std::vector<journal_entry>& entries) override;

  /// Writes snapshot.json of the next generation (temp, fsync, rename, fsync dir), then
  /// empties the journal. When it fails after the rename, the next append finishes it.
  caf::error compact(const state_snapshot& state) override;

  /// Bytes of durable records in the journal.
  size_t journal_bytes() const override;

  /// Generation of the snapshot on disk (0 before the first compaction).
  uint64_t generation() const;

private:
  caf::error open_journal();
  caf::error check_journal_reachable() const;
  caf::error cut_journal(size_t size);
  /// Completes a compaction whose snapshot is in place: fsync dir, empty the journal.
  caf::error finish_switch();
  /// Runs `attempt`; while it fails for lack of space, releases reserve and retries.
  caf::error with_room(const std::string& what, uint64_t needed,
                       const std::function<caf::error()>& attempt);
  caf::error keep_damaged(const std::string& journal);
  caf::expected<state_snapshot> load_legacy();

  std::string dir_;
  std::string journal_path_;
  std::string snapshot_path_;
  int fd_ = -1;
  uint64_t generation_ = 0;    ///< the snapshot's; a fresh journal's header names it
  bool switch_pending_ = false; ///< a new snapshot is in place, the journal not yet cut
  std::unique_ptr<journal_reserve> reserve_;
  size_t good_bytes_ = 0;   ///< journal length up to the last durable record
  bool needs_cut_ = false;  ///< a failed append may have left bytes past good_bytes_
  struct stat opened_ {};   ///< identity of the journal file we write
};

} // namespace berth
