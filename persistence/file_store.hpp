#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <sys/stat.h>

#include "persistence/journal_reserve.hpp"
#include "persistence/store.hpp"

namespace berth {

namespace detail {
struct decoded_journal;
} // namespace detail

/// The durable state on disk, in one folder:
/// - `journal.log`: records `[u32 length][u32 crc32][JSON]`, little-endian. The first is
///   {"op":"journal","generation":N}, the snapshot generation the journal continues; the
///   others are {"op":"put","record":{...}} or {"op":"erase","name":"..."}. A record is at
///   most limits::max_frame_bytes: larger ones are refused when written, and a length field
///   beyond it is damage when read;
/// - `snapshot.json`: {"version":2,"generation":N,"boot_id":"...","volumes":[record,...]};
///   every compaction writes generation N+1;
/// - `journal.next`, only during a compaction: the journal appends go to while the
///   snapshot is written, continuing generation N+1; once the snapshot is in place it is
///   renamed over `journal.log` (docs/architecture.md, "Durable state", the steps);
/// - `reserve`: preallocated room for appends and compaction on a full filesystem.
///
/// A journal of an older generation than the snapshot (a crash came between a compaction's
/// rename and its switch) is not replayed: the snapshot already holds all of it, and may hold
/// decisions made since (reconciliation clears counts at a new boot). A journal of a newer
/// generation means the snapshot was lost; load refuses it. A `journal.next` left by a
/// crash is replayed after `journal.log` (snapshot not yet renamed) or alone (renamed),
/// and load then writes what it recovered as a new snapshot, so both journals go.
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

  /// begin_compaction(), write_snapshot() and finish_compaction() in a row, drawing on
  /// the reserve when the filesystem is full. When it fails after the snapshot's rename,
  /// the next append finishes it.
  caf::error compact(const state_snapshot& state) override;

  /// Creates journal.next (header of the next generation, fsync, fsync dir) and sends
  /// appends there. Refused while a compaction is in progress.
  caf::expected<uint64_t> begin_compaction() override;

  /// snapshot.json of `generation` from `state`: temp, fsync, rename, fsync dir. Reads
  /// only what never changes after construction, so it runs beside append(); it does not
  /// draw on the reserve (not thread-safe), compact() does.
  caf::error write_snapshot(const shared_state& state, uint64_t generation) override;

  /// Renames journal.next over journal.log and fsyncs the directory.
  caf::error finish_compaction(uint64_t generation) override;

  /// Bytes of durable records in the journal appends go to.
  size_t journal_bytes() const override;

  /// Generation of the snapshot on disk (0 before the first compaction).
  uint64_t generation() const;

private:
  caf::error open_journal();
  caf::error check_journal_reachable() const;
  caf::error cut_journal(size_t size);
  /// Completes a compaction whose snapshot is in place: journal.next becomes journal.log.
  caf::error finish_switch();
  /// The snapshot of `generation`, written as write_snapshot() does but drawing on the
  /// reserve (this thread appends too).
  caf::error write_snapshot_with_room(const state_snapshot& state, uint64_t generation);
  /// Writes the snapshot's `text` as write_snapshot() does.
  caf::error write_snapshot_text(const std::string& text);
  /// load()'s end when a crash left journal.next: `state` (both journals replayed)
  /// becomes a snapshot newer than either journal, then both go.
  caf::error settle_interrupted_compaction(const state_snapshot& state, uint64_t newest);
  /// The path appends go to: journal.next during a compaction, else journal.log.
  const std::string& active_path() const;
  /// Runs `attempt`; while it fails for lack of space, releases reserve and retries.
  caf::error with_room(const std::string& what, uint64_t needed,
                       const std::function<caf::error()>& attempt);
  caf::error keep_damaged(const std::string& path, const std::string& content);
  /// Applies the decoded records of the journal at `path` to `state`; a damaged middle is
  /// logged and kept aside, a torn tail only logged.
  caf::error replay(const std::string& path, const std::string& journal,
                    detail::decoded_journal& decoded, state_snapshot& state);
  /// Replays journal.next (`next`) when the state holds what it continues
  /// (`log_replayed`: journal.log was replayed whole); `newest` gets its generation.
  caf::error replay_next(const std::string& next, bool log_replayed, state_snapshot& state,
                         uint64_t& newest);
  caf::expected<state_snapshot> load_legacy();

  std::string dir_;
  std::string journal_path_;
  std::string snapshot_path_;
  std::string next_path_;      ///< journal.next
  int fd_ = -1;                ///< the journal appends go to (active_path())
  uint64_t generation_ = 0;    ///< the snapshot's; a fresh journal's header names it
  bool next_active_ = false;   ///< a compaction began: appends go to journal.next
  bool switch_pending_ = false; ///< its snapshot is in place, journal.next not yet renamed
  std::unique_ptr<journal_reserve> reserve_;
  size_t good_bytes_ = 0;   ///< journal length up to the last durable record
  bool needs_cut_ = false;  ///< a failed append may have left bytes past good_bytes_
  struct stat opened_ {};   ///< identity of the journal file we write
};

} // namespace berth
