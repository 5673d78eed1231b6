#pragma once

// Files written by the book: temp file, write, fsync, rename, fsync the directory;
// reads and writes that retry EINTR; errors that name the file and the errno. The
// journal and the snapshot (file_store) are written through these.

#include <string>

#include <sys/types.h>

#include <caf/error.hpp>

namespace berth::durable {

/// ec::persist_failure "WHAT PATH: strerror(err)"; notes whether `err` was a full
/// filesystem (or quota), see last_failure_was_no_space().
caf::error io_error(const std::string& what, const std::string& path, int err);

/// Whether the last io_error on this thread was ENOSPC or EDQUOT, which the journal's
/// reserve can help with. The store is used by one thread at a time; a caller may reset it.
bool& last_failure_was_no_space();

/// Reads all of `fd` from offset 0 into `out`.
caf::error read_fd(int fd, const std::string& path, std::string& out);

/// Reads a whole file. `found` is false (and no error) when it does not exist.
caf::error read_file(const std::string& path, std::string& out, bool& found);

/// Writes `size` bytes at `offset` of `fd` (the file `path`), whatever the short writes.
caf::error write_all(int fd, const char* data, size_t size, off_t offset, const std::string& path);

/// fsyncs the directory `dir`, so that an entry made or renamed in it is durable.
caf::error fsync_dir(const std::string& dir);

/// Writes `text` to `tmp` (created or emptied) and fsyncs it; removes it on failure.
caf::error write_temp_file(const std::string& tmp, const std::string& text);

/// Writes a new file durably: temp file, write, fsync, rename, fsync the directory.
caf::error write_file_atomically(const std::string& dir, const std::string& path,
                                 const std::string& text);

/// Creates `dir` (mode 0700) and its parents when missing; the new entry is fsync'd.
caf::error ensure_dir(const std::string& dir);

} // namespace berth::durable
