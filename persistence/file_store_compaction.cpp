// file_store's compaction, in the order of its steps on disk (the rest of the class is in
// file_store.cpp). Each step is a crash point; a crash at any of them loads to every
// acknowledged record (tests/persistence/compaction_crash_test.cpp):
//
//   begin_compaction   journal.next created: header of generation G+1, fsync, fsync dir
//                      ── compact-journal-next-created; appends go to journal.next now
//   write_snapshot     snapshot.json.tmp of G+1 written and fsync'd ── compact-snapshot-written
//   (another thread)   renamed to snapshot.json ── compact-snapshot-renamed
//                      directory fsync'd ── compact-snapshot-durable
//   finish_compaction  journal.next renamed over journal.log ── compact-journal-cut
//                      directory fsync'd ── compact-journal-switched
//
// Until the snapshot's rename, load replays journal.log and then journal.next over the
// snapshot of G; after it, journal.log (generation G) is stale and journal.next alone is
// replayed. The snapshot is the state at begin_compaction(), which is exactly the snapshot
// of G plus journal.log: nothing is appended to journal.log once journal.next exists.

#include "persistence/file_store.hpp"

#include <algorithm>
#include <cerrno>
#include <fcntl.h>
#include <unistd.h>

#include <spdlog/spdlog.h>

#include "core/errors.hpp"
#include "core/crash_point.hpp"
#include "persistence/durable_file.hpp"
#include "persistence/journal_format.hpp"

namespace berth {

using namespace durable;

namespace {

/// The snapshot's steps after its temp file is written: rename, fsync the directory.
caf::error rename_into_place(const std::string& dir, const std::string& tmp,
                             const std::string& snapshot) {
  test_crash_point("compact-snapshot-written");
  if (::rename(tmp.c_str(), snapshot.c_str()) != 0) {
    auto err = io_error("cannot rename to", snapshot, errno);
    ::unlink(tmp.c_str());
    return err;
  }
  test_crash_point("compact-snapshot-renamed");
  // The journal is switched only once the snapshot's rename is durable.
  if (auto err = fsync_dir(dir)) {
    return err;
  }
  test_crash_point("compact-snapshot-durable");
  return {};
}

} // namespace

caf::expected<uint64_t> file_store::begin_compaction() {
  if (next_active_) {
    return make_error(ec::persist_failure, "a compaction of " + dir_ + " is in progress");
  }
  if (auto err = open_journal()) {
    return err;
  }
  if (auto err = check_journal_reachable()) {
    return err;
  }
  if (needs_cut_) {
    // A failed append's bytes must not stay in a journal that load replays whole.
    if (auto err = cut_journal(good_bytes_)) {
      return err;
    }
  }
  auto next = generation_ + 1;
  std::string header;
  detail::encode_journal_header(next, header);
  int fd = ::open(next_path_.c_str(), O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (fd < 0) {
    return io_error("cannot create", next_path_, errno);
  }
  auto err = with_room("compaction", header.size(), [&]() -> caf::error {
    if (auto err = write_all(fd, header.data(), header.size(), 0, next_path_)) {
      return err;
    }
    return ::fdatasync(fd) == 0 ? caf::error{} : io_error("cannot fsync", next_path_, errno);
  });
  // Appends may go there only once its name is durable too.
  if (!err) {
    err = fsync_dir(dir_);
  }
  struct stat opened {};
  if (!err && ::fstat(fd, &opened) != 0) {
    err = io_error("cannot stat", next_path_, errno);
  }
  if (err) {
    // Only a header, which nobody relies on: the old journal keeps taking appends.
    ::close(fd);
    return err;
  }
  test_crash_point("compact-journal-next-created");
  ::close(fd_);
  fd_ = fd;
  opened_ = opened;
  good_bytes_ = header.size();
  next_active_ = true;
  return next;
}

caf::error file_store::write_snapshot(const shared_state& state, uint64_t generation) {
  return write_snapshot_text(detail::encode_snapshot(state, generation));
}

caf::error file_store::write_snapshot_text(const std::string& text) {
  auto tmp = snapshot_path_ + ".tmp";
  if (auto err = write_temp_file(tmp, text)) {
    return err;
  }
  return rename_into_place(dir_, tmp, snapshot_path_);
}

caf::error file_store::write_snapshot_with_room(const state_snapshot& state,
                                                uint64_t generation) {
  auto text = detail::encode_snapshot(state, generation);
  auto tmp = snapshot_path_ + ".tmp";
  if (auto err = with_room("compaction", text.size(),
                           [&] { return write_temp_file(tmp, text); })) {
    return err;
  }
  return rename_into_place(dir_, tmp, snapshot_path_);
}

caf::error file_store::finish_compaction(uint64_t generation) {
  if (!next_active_) {
    return make_error(ec::persist_failure, "no compaction of " + dir_ + " is in progress");
  }
  // From here on journal.log is stale: load skips it, whatever happens next.
  generation_ = generation;
  switch_pending_ = true;
  return finish_switch();
}

caf::error file_store::finish_switch() {
  if (!switch_pending_) {
    return {};
  }
  if (::rename(next_path_.c_str(), journal_path_.c_str()) != 0) {
    return io_error("cannot rename to", journal_path_, errno);
  }
  switch_pending_ = false;
  next_active_ = false; // the same open file, now named journal.log
  test_crash_point("compact-journal-cut");
  // Not durable yet, but either name loads: journal.next replays over the snapshot as
  // journal.log would.
  if (auto err = fsync_dir(dir_)) {
    return err;
  }
  test_crash_point("compact-journal-switched");
  return {};
}

caf::error file_store::compact(const state_snapshot& state) {
  if (switch_pending_) {
    if (auto err = finish_switch()) {
      return err;
    }
  }
  auto generation = begin_compaction();
  if (!generation) {
    return generation.error();
  }
  if (auto err = write_snapshot_with_room(state, *generation)) {
    // journal.next keeps taking appends; load replays it after journal.log.
    return err;
  }
  if (auto err = finish_compaction(*generation)) {
    return err;
  }
  reserve_->refill();
  return {};
}

caf::error file_store::settle_interrupted_compaction(const state_snapshot& state,
                                                     uint64_t newest) {
  // Newer than both journals, so a crash from here on skips them both at the next load.
  auto generation = std::max(generation_, newest) + 1;
  if (auto err = write_snapshot_with_room(state, generation)) {
    return err;
  }
  generation_ = generation;
  if (::unlink(next_path_.c_str()) != 0 && errno != ENOENT) {
    return io_error("cannot remove", next_path_, errno);
  }
  if (auto err = cut_journal(0)) {
    return err;
  }
  if (auto err = fsync_dir(dir_)) {
    return err;
  }
  spdlog::info("state {}: the interrupted compaction is finished as snapshot generation {}",
               dir_, generation);
  return {};
}

} // namespace berth
