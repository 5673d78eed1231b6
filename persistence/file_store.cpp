#include "persistence/file_store.hpp"

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <unistd.h>

#include <spdlog/spdlog.h>

#include "core/errors.hpp"
#include "persistence/journal_format.hpp"

namespace berth {

namespace {

caf::error io_error(const std::string& what, const std::string& path, int err) {
  return make_error(ec::persist_failure, what + " " + path + ": " + std::strerror(err));
}

/// Reads a whole file; false when it does not exist.
bool read_file(const std::string& path, std::string& out) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    return false;
  }
  std::ostringstream ss;
  ss << in.rdbuf();
  out = ss.str();
  return true;
}

caf::error write_all(int fd, const char* data, size_t size, off_t offset,
                     const std::string& path) {
  while (size > 0) {
    auto n = ::pwrite(fd, data, size, offset);
    if (n < 0) {
      if (errno == EINTR) {
        continue;
      }
      return io_error("cannot write", path, errno);
    }
    data += n;
    size -= static_cast<size_t>(n);
    offset += n;
  }
  return {};
}

caf::error fsync_dir(const std::string& dir) {
  int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) {
    return io_error("cannot open directory", dir, errno);
  }
  int rc = ::fsync(fd);
  int err = errno;
  ::close(fd);
  return rc == 0 ? caf::error{} : io_error("cannot fsync directory", dir, err);
}

} // namespace

file_store::file_store(std::string dir)
  : dir_(std::move(dir)),
    journal_path_(dir_ + "/journal.log"),
    snapshot_path_(dir_ + "/snapshot.json") {
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
  std::error_code ec_fs;
  std::filesystem::create_directories(dir_, ec_fs);
  if (ec_fs) {
    return make_error(ec::persist_failure, "cannot create " + dir_ + ": " + ec_fs.message());
  }
  ::chmod(dir_.c_str(), 0700);
  fd_ = ::open(journal_path_.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
  if (fd_ < 0) {
    return io_error("cannot open", journal_path_, errno);
  }
  if (::fstat(fd_, &opened_) != 0) {
    return io_error("cannot stat", journal_path_, errno);
  }
  return {};
}

caf::error file_store::check_journal_reachable() const {
  struct stat now {};
  if (::stat(journal_path_.c_str(), &now) != 0 || now.st_dev != opened_.st_dev
      || now.st_ino != opened_.st_ino) {
    // Writes to an unlinked file are not durable state: refuse them.
    return make_error(ec::persist_failure, "state directory " + dir_
                                             + " is gone or its journal was replaced");
  }
  return {};
}

caf::expected<state_snapshot> file_store::load() {
  if (auto err = open_journal()) {
    return err;
  }
  state_snapshot state;
  std::string text;
  bool have_snapshot = read_file(snapshot_path_, text);
  if (have_snapshot) {
    auto snap = detail::decode_snapshot(text);
    if (!snap) {
      return make_error(ec::persist_failure,
                        "cannot read " + snapshot_path_ + ": " + describe(snap.error()));
    }
    state = std::move(*snap);
  }
  std::string journal;
  read_file(journal_path_, journal);
  std::string problem;
  auto entries = detail::decode_entries(journal, good_bytes_, problem);
  for (const auto& entry : entries) {
    detail::apply_entry(state, entry);
  }
  if (good_bytes_ < journal.size()) {
    // Never acknowledged: a crash cut it off mid-write. Drop it so appends continue cleanly.
    spdlog::warn("journal {}: {}; dropping the last {} byte(s)", journal_path_, problem,
                 journal.size() - good_bytes_);
    if (::ftruncate(fd_, static_cast<off_t>(good_bytes_)) != 0 || ::fsync(fd_) != 0) {
      return io_error("cannot truncate", journal_path_, errno);
    }
  }
  if (!have_snapshot && entries.empty()) {
    for (const auto& legacy : {dir_ + "/state.json", dir_ + "/../state.json"}) {
      if (read_file(legacy, text)) {
        auto old = detail::decode_legacy_state(text);
        if (!old) {
          return make_error(ec::persist_failure,
                            "cannot read " + legacy + ": " + describe(old.error()));
        }
        spdlog::info("loaded {} volume(s) from the older state file {}", old->volumes.size(),
                     legacy);
        return old;
      }
    }
  }
  return state;
}

caf::error file_store::append(const std::vector<journal_entry>& entries) {
  if (auto err = open_journal()) {
    return err;
  }
  if (auto err = check_journal_reachable()) {
    return err;
  }
  std::string buf;
  for (const auto& entry : entries) {
    detail::encode_entry(entry, buf);
  }
  auto err = write_all(fd_, buf.data(), buf.size(), static_cast<off_t>(good_bytes_),
                       journal_path_);
  if (!err && ::fdatasync(fd_) != 0) {
    err = io_error("cannot fsync", journal_path_, errno);
  }
  if (err) {
    // Nobody will be told these records are durable: make sure a load never sees them.
    if (::ftruncate(fd_, static_cast<off_t>(good_bytes_)) != 0) {
      spdlog::error("journal {}: cannot cut off a failed write: {}", journal_path_,
                    std::strerror(errno));
    }
    return err;
  }
  good_bytes_ += buf.size();
  return {};
}

caf::error file_store::compact(const state_snapshot& state) {
  if (auto err = open_journal()) {
    return err;
  }
  if (auto err = check_journal_reachable()) {
    return err;
  }
  auto tmp = snapshot_path_ + ".tmp";
  int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (fd < 0) {
    return io_error("cannot create", tmp, errno);
  }
  auto text = detail::encode_snapshot(state);
  auto err = write_all(fd, text.data(), text.size(), 0, tmp);
  if (!err && ::fsync(fd) != 0) {
    err = io_error("cannot fsync", tmp, errno);
  }
  ::close(fd);
  if (!err && ::rename(tmp.c_str(), snapshot_path_.c_str()) != 0) {
    err = io_error("cannot rename to", snapshot_path_, errno);
  }
  if (!err) {
    err = fsync_dir(dir_);
  }
  if (err) {
    ::unlink(tmp.c_str());
    return err;
  }
  // The snapshot holds everything now; the journal starts over.
  if (::ftruncate(fd_, 0) != 0 || ::fsync(fd_) != 0) {
    return io_error("cannot truncate", journal_path_, errno);
  }
  good_bytes_ = 0;
  return {};
}

size_t file_store::journal_bytes() const {
  return good_bytes_;
}

} // namespace berth
