#pragma once

#include <string>
#include <sys/stat.h>

#include "persistence/store.hpp"

namespace berth {

/// The durable state on disk, in one folder:
/// - `journal.log`: records `[u32 length][u32 crc32][JSON]`, little-endian; the JSON is
///   {"op":"put","record":{...}} or {"op":"erase","name":"..."};
/// - `snapshot.json`: {"version":1,"boot_id":"...","volumes":[record,...]}.
/// Loading reads the snapshot, then replays the journal up to the first record that is
/// torn or fails its checksum; the rest is cut off (it was never acknowledged). With
/// neither file, an older berth's `state.json` (in the folder or its parent) is read.
class file_store : public store {
public:
  /// `dir` is created (mode 0700) at load() when missing.
  explicit file_store(std::string dir);
  ~file_store() override;

  file_store(const file_store&) = delete;
  file_store& operator=(const file_store&) = delete;

  caf::expected<state_snapshot> load() override;
  caf::error append(const std::vector<journal_entry>& entries) override;
  caf::error compact(const state_snapshot& state) override;
  size_t journal_bytes() const override;

private:
  caf::error open_journal();
  caf::error check_journal_reachable() const;

  std::string dir_;
  std::string journal_path_;
  std::string snapshot_path_;
  int fd_ = -1;
  size_t good_bytes_ = 0; ///< journal length up to the last durable record
  struct stat opened_ {};  ///< identity of the journal file we write
};

} // namespace berth
