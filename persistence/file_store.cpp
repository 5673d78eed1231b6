#include "persistence/file_store.hpp"

#include <cerrno>
#include <ctime>
#include <fcntl.h>
#include <functional>
#include <unistd.h>

#include <spdlog/spdlog.h>

#include "core/errors.hpp"
#include "core/crash_point.hpp"
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
  next_path_ = dir_ + "/journal.next";
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

const std::string& file_store::active_path() const {
  return next_active_ ? next_path_ : journal_path_;
}

caf::error file_store::check_journal_reachable() const {
  struct stat now {};
  struct stat open_now {};
  if (::stat(active_path().c_str(), &now) != 0 || now.st_dev != opened_.st_dev
      || now.st_ino != opened_.st_ino || ::fstat(fd_, &open_now) != 0
      || open_now.st_nlink == 0) {
    // Writes to an unlinked file are not durable state: refuse them.
    return make_error(ec::persist_failure, "state directory " + dir_ + " is gone: "
                                             + active_path()
                                             + " no longer names the open journal");
  }
  return {};
}

caf::error file_store::cut_journal(size_t size) {
  if (::ftruncate(fd_, static_cast<off_t>(size)) != 0 || ::fsync(fd_) != 0) {
    needs_cut_ = true;
    return io_error("cannot truncate", active_path(), errno);
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

caf::error file_store::keep_damaged(const std::string& journal, const std::string& content) {
  auto path = journal + ".damaged-" + std::to_string(std::time(nullptr));
  if (auto err = with_room("keeping the damaged journal", content.size(),
                           [&] { return write_file_atomically(dir_, path, content); })) {
    return err;
  }
  spdlog::error("journal {}: the damaged journal is kept as {}", journal, path);
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
  bool stale = !journal.empty() && continues < generation_;
  bool have_records = !decoded.entries.empty();
  if (stale) {
    // A compaction wrote its snapshot but a crash came before the journal switched:
    // everything in it is in the snapshot already, and the snapshot may hold decisions
    // (reconciliation's) that replaying older records would undo.
    spdlog::warn("journal {} continues snapshot generation {}, the snapshot is generation {}: "
                 "a compaction was interrupted; its records are in the snapshot, not replayed",
                 journal_path_, continues, generation_);
    if (auto err = cut_journal(0)) {
      return err;
    }
  } else {
    if (auto err = replay(journal_path_, journal, decoded, state)) {
      return err;
    }
    if (decoded.good_bytes < journal.size()) {
      if (auto err = cut_journal(decoded.good_bytes)) {
        return err;
      }
    }
    good_bytes_ = decoded.good_bytes;
  }
  std::string next;
  bool have_next = false;
  if (auto err = read_file(next_path_, next, have_next)) {
    return err;
  }
  if (have_next) {
    auto newest = generation_;
    if (auto err = replay_next(next, !stale && !decoded.corrupt_middle, state, newest)) {
      return err;
    }
    if (auto err = settle_interrupted_compaction(state, newest)) {
      return err;
    }
    return state;
  }
  if (stale) {
    return state;
  }
  if (!have_snapshot && !have_records) {
    return load_legacy();
  }
  return state;
}

caf::error file_store::replay(const std::string& path, const std::string& journal,
                              detail::decoded_journal& decoded, state_snapshot& state) {
  for (const auto& entry : decoded.entries) {
    detail::apply_entry(state, entry);
  }
  if (decoded.good_bytes < journal.size()) {
    auto dropped = journal.size() - decoded.good_bytes;
    if (decoded.corrupt_middle) {
      spdlog::error("journal {}: {}; replay stops there, the last {} byte(s) are not applied",
                    path, decoded.problem, dropped);
      return keep_damaged(path, journal);
    }
    // Never acknowledged: a crash cut it off mid-write.
    spdlog::warn("journal {}: {}; dropping the last {} byte(s)", path, decoded.problem,
                 dropped);
  }
  return {};
}

caf::error file_store::replay_next(const std::string& next, bool log_replayed,
                                   state_snapshot& state, uint64_t& newest) {
  auto decoded = detail::decode_entries(next);
  if (!decoded.has_header) {
    // Its header is written and fsync'd before any append goes there: a crash cut the
    // header itself, and nothing in it was acknowledged.
    spdlog::warn("journal {}: no header; a compaction was interrupted as it began", next_path_);
    return {};
  }
  auto continues = decoded.generation;
  if (continues > generation_ + 1) {
    return make_error(ec::persist_failure,
                      next_path_ + " continues snapshot generation " + std::to_string(continues)
                        + ", but " + snapshot_path_ + " is generation "
                        + std::to_string(generation_)
                        + ": the snapshot was replaced or lost. Restore it, or move "
                          "journal.next aside to start without it");
  }
  newest = std::max(newest, continues);
  // The snapshot it continues is in place, or it is not yet and journal.log (its older
  // part) was replayed whole: then the state holds everything journal.next continues.
  bool applies = continues == generation_ || (continues == generation_ + 1 && log_replayed);
  if (!applies) {
    if (continues < generation_) {
      spdlog::warn("journal {} continues snapshot generation {}, the snapshot is generation "
                   "{}: its records are in the snapshot, not replayed",
                   next_path_, continues, generation_);
      return {};
    }
    // journal.log stopped at damage: records after a hole are not applied (see load).
    spdlog::error("journal {}: not replayed, since {} before it is damaged", next_path_,
                  journal_path_);
    return keep_damaged(next_path_, next);
  }
  spdlog::warn("journal {}: a compaction was interrupted; replaying its {} record(s)",
               next_path_, decoded.entries.size());
  return replay(next_path_, next, decoded, state);
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
    // journal.next continues the snapshot in place, so it takes appends meanwhile.
    spdlog::warn("journal {}: {}; appending to it until it is renamed", next_path_,
                 describe(err));
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
                         active_path());
    if (!err && ::fdatasync(fd_) != 0) {
      err = io_error("cannot fsync", active_path(), errno);
    }
    if (err) {
      bool no_space = last_failure_was_no_space();
      // Nobody will be told these records are durable: make sure a load never sees them.
      if (auto cut_err = cut_journal(good_bytes_)) {
        spdlog::error("journal {}: cannot cut off a failed write: {}", active_path(),
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

size_t file_store::journal_bytes() const {
  return good_bytes_;
}

uint64_t file_store::generation() const {
  return generation_;
}

} // namespace berth
