#include "persistence/file_store.hpp"

#include <cerrno>
#include <ctime>
#include <fcntl.h>
#include <functional>
#include <unistd.h>

#include <spdlog/spdlog.h>

#include "core/errors.hpp"
#include "persistence/crash_point.hpp"
#include "persistence/durable_file.hpp"
#include "persistence/journal_format.hpp"

namespace berth {

using namespace durable;


// -- file_store ---------------------------------------------------------------------------

file_store::file_store(std::string dir, uint64_t reserve_bytes) : dir_(std::move(dir)) {
  while (dir_.size() > 1 && dir_.back() == '/') {
    dir_.pop_back();
  }
  journal_path_ = dir_ + "/journal.log";
  snapshot_path_ = dir_ + "/snapshot.json";
  reserve_ = std::make_unique<journal_reserve>(dir_ + "/reserve", reserve_bytes);
}

file_store::~file_store() {
  if (fd_ >= 0) {
    ::close(fd_);
  }
}

caf::error file_store::open_journal() {
  if (fd_ >= 0) {
    return {};
  }
  if (auto err = ensure_dir(dir_)) {
    return err;
  }
  bool existed = ::access(journal_path_.c_str(), F_OK) == 0;
  fd_ = ::open(journal_path_.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
  if (fd_ < 0) {
    return io_error("cannot open", journal_path_, errno);
  }
  if (::fstat(fd_, &opened_) != 0) {
    auto err = io_error("cannot stat", journal_path_, errno);
    ::close(fd_);
    fd_ = -1;
    return err;
  }
  good_bytes_ = static_cast<size_t>(opened_.st_size);
  // A journal whose directory entry is lost in a crash would lose every record in it.
  return existed ? caf::error{} : fsync_dir(dir_);
}

caf::error file_store::check_journal_reachable() const {
  struct stat now {};
  struct stat open_now {};
  if (::stat(journal_path_.c_str(), &now) != 0 || now.st_dev != opened_.st_dev
      || now.st_ino != opened_.st_ino || ::fstat(fd_, &open_now) != 0
      || open_now.st_nlink == 0) {
    // Writes to an unlinked file are not durable state: refuse them.
    return make_error(ec::persist_failure, "state directory " + dir_ + " is gone: "
                                             + journal_path_
                                             + " no longer names the open journal");
  }
  return {};
}

caf::error file_store::cut_journal(size_t size) {
  if (::ftruncate(fd_, static_cast<off_t>(size)) != 0 || ::fsync(fd_) != 0) {
    needs_cut_ = true;
    return io_error("cannot truncate", journal_path_, errno);
  }
  good_bytes_ = size;
  needs_cut_ = false;
  return {};
}

caf::error file_store::with_room(const std::string& what, uint64_t needed,
                                 const std::function<caf::error()>& attempt) {
  for (;;) {
    last_failure_was_no_space() = false;
    auto err = attempt();
    if (!err || !last_failure_was_no_space()) {
      return err;
    }
    // A little more than asked: the filesystem needs room for its own metadata too.
    auto freed = reserve_->release(needed + needed / 4 + (uint64_t{1} << 20));
    if (freed == 0) {
      spdlog::critical("{}: the state filesystem {} is full and the journal reserve {} is "
                       "used up: {}. Free space on it (volumes may share it; see --block-dir)",
                       what, dir_, reserve_->path(), describe(err));
      return err;
    }
    spdlog::error("{}: the state filesystem {} is full; released {} MiB of the journal "
                  "reserve ({} MiB left) and retrying. Free space on it soon",
                  what, dir_, freed >> 20, reserve_->held() >> 20);
  }
}

caf::error file_store::keep_damaged(const std::string& journal) {
  auto path = journal_path_ + ".damaged-" + std::to_string(std::time(nullptr));
  if (auto err = with_room("keeping the damaged journal", journal.size(),
                           [&] { return write_file_atomically(dir_, path, journal); })) {
    return err;
  }
  spdlog::error("journal {}: the damaged journal is kept as {}", journal_path_, path);
  return {};
}

caf::expected<state_snapshot> file_store::load_legacy() {
  for (const auto& legacy : {dir_ + "/state.json", dir_ + "/../state.json"}) {
    std::string text;
    bool found = false;
    if (auto err = read_file(legacy, text, found)) {
      return err;
    }
    if (!found) {
      continue;
    }
    auto old = detail::decode_legacy_state(text);
    if (!old) {
      return make_error(ec::persist_failure,
                        "cannot read " + legacy + ": " + describe(old.error()));
    }
    // Written once in today's format, so later journal records apply on top of it.
    if (auto err = compact(*old)) {
      return err;
    }
    spdlog::info("loaded {} volume(s) from the older state file {}", old->volumes.size(),
                 legacy);
    return old;
  }
  return state_snapshot{};
}

caf::expected<state_snapshot> file_store::load() {
  if (auto err = open_journal()) {
    return err;
  }
  // Made first, while there may still be room; a full filesystem leaves it short.
  reserve_->refill();
  state_snapshot state;
  std::string text;
  bool have_snapshot = false;
  if (auto err = read_file(snapshot_path_, text, have_snapshot)) {
    return err;
  }
  generation_ = 0;
  if (have_snapshot) {
    auto snap = detail::decode_snapshot(text);
    if (!snap) {
      return make_error(ec::persist_failure,
                        "cannot read " + snapshot_path_ + ": " + describe(snap.error()));
    }
    state = std::move(snap->state);
    generation_ = snap->generation;
  }
  std::string journal;
  if (auto err = read_fd(fd_, journal_path_, journal)) {
    return err;
  }
  auto decoded = detail::decode_entries(journal);
  auto continues = decoded.has_header ? decoded.generation : 0;
  if (!journal.empty() && continues > generation_) {
    return make_error(ec::persist_failure,
                      journal_path_ + " continues snapshot generation "
                        + std::to_string(continues) + ", but " + snapshot_path_ + " is "
                        + (have_snapshot ? "generation " + std::to_string(generation_)
                                         : std::string{"missing"})
                        + ": the snapshot was replaced or lost. Restore it, or move "
                          "journal.log aside to start from the snapshot alone");
  }
  if (!journal.empty() && continues < generation_) {
    // A compaction wrote its snapshot but a crash came before it emptied the journal:
    // everything in it is in the snapshot already, and the snapshot may hold decisions
    // (reconciliation's) that replaying older records would undo.
    spdlog::warn("journal {} continues snapshot generation {}, the snapshot is generation {}: "
                 "a compaction was interrupted; its records are in the snapshot, not replayed",
                 journal_path_, continues, generation_);
    if (auto err = cut_journal(0)) {
      return err;
    }
    return state;
  }
  bool have_records = !decoded.entries.empty();
  for (auto& entry : decoded.entries) {
    detail::apply_entry(state, std::move(entry));
  }
  if (decoded.good_bytes < journal.size()) {
    auto dropped = journal.size() - decoded.good_bytes;
    if (decoded.corrupt_middle) {
      spdlog::error("journal {}: {}; replay stops there, the last {} byte(s) are not applied",
                    journal_path_, decoded.problem, dropped);
      if (auto err = keep_damaged(journal)) {
        return err;
      }
    } else {
      // Never acknowledged: a crash cut it off mid-write.
      spdlog::warn("journal {}: {}; dropping the last {} byte(s)", journal_path_,
                   decoded.problem, dropped);
    }
  }
  if (decoded.good_bytes < journal.size()) {
    if (auto err = cut_journal(decoded.good_bytes)) {
      return err;
    }
  }
  good_bytes_ = decoded.good_bytes;
  if (!have_snapshot && !have_records) {
    return load_legacy();
  }
  return state;
}

caf::error file_store::append(const std::vector<journal_entry>& entries) {
  if (entries.empty()) {
    return {};
  }
  if (auto err = open_journal()) {
    return err;
  }
  if (auto err = check_journal_reachable()) {
    return err;
  }
  if (auto err = finish_switch()) {
    return err;
  }
  if (needs_cut_) {
    if (auto err = cut_journal(good_bytes_)) {
      return err;
    }
  }
  std::string buf;
  if (good_bytes_ == 0) {
    detail::encode_journal_header(generation_, buf);
  }
  for (const auto& entry : entries) {
    // Refused before anything is written: the journal stays whole.
    if (auto err = detail::encode_entry(entry, buf)) {
      return err;
    }
  }
  auto err = with_room("journal append", buf.size(), [&]() -> caf::error {
    auto err = write_all(fd_, buf.data(), buf.size(), static_cast<off_t>(good_bytes_),
                         journal_path_);
    if (!err && ::fdatasync(fd_) != 0) {
      err = io_error("cannot fsync", journal_path_, errno);
    }
    if (err) {
      bool no_space = last_failure_was_no_space();
      // Nobody will be told these records are durable: make sure a load never sees them.
      if (auto cut_err = cut_journal(good_bytes_)) {
        spdlog::error("journal {}: cannot cut off a failed write: {}", journal_path_,
                      describe(cut_err));
      }
      last_failure_was_no_space() = no_space;
    }
    return err;
  });
  if (err) {
    return err;
  }
  good_bytes_ += buf.size();
  reserve_->refill_now_and_then();
  return {};
}

caf::error file_store::compact(const state_snapshot& state) {
  if (auto err = open_journal()) {
    return err;
  }
  if (auto err = check_journal_reachable()) {
    return err;
  }
  // Generations make the two steps safe in any order of crashes: the snapshot names its
  // generation, the journal's first record the generation it continues. Once the new
  // snapshot is in place the old journal is stale and never replayed, even if the crash
  // comes before it is emptied.
  auto next = generation_ + 1;
  auto text = detail::encode_snapshot(state, next);
  auto tmp = snapshot_path_ + ".tmp";
  if (auto err = with_room("compaction", text.size(),
                           [&] { return write_temp_file(tmp, text); })) {
    return err;
  }
  test_crash_point("compact-snapshot-written");
  if (::rename(tmp.c_str(), snapshot_path_.c_str()) != 0) {
    auto err = io_error("cannot rename to", snapshot_path_, errno);
    ::unlink(tmp.c_str());
    return err;
  }
  // From here on the old journal must not take appends: they would be skipped at load.
  generation_ = next;
  switch_pending_ = true;
  test_crash_point("compact-snapshot-renamed");
  if (auto err = finish_switch()) {
    return err;
  }
  reserve_->refill();
  return {};
}

caf::error file_store::finish_switch() {
  if (!switch_pending_) {
    return {};
  }
  // The snapshot's rename must be durable before the journal is emptied.
  if (auto err = fsync_dir(dir_)) {
    return err;
  }
  test_crash_point("compact-snapshot-durable");
  if (auto err = cut_journal(0)) {
    return err;
  }
  switch_pending_ = false;
  test_crash_point("compact-journal-cut");
  return {};
}

size_t file_store::journal_bytes() const {
  return good_bytes_;
}

uint64_t file_store::generation() const {
  return generation_;
}

} // namespace berth
