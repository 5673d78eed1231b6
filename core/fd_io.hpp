#pragma once

// Writing a whole buffer to a file descriptor (a pipe, a file, a socket in blocking mode),
// as berthctl's and berthd's tar streams both do, or to a file at an offset.

#include <cerrno>
#include <cstddef>
#include <cstdint>

#include <unistd.h>

namespace berth {

/// Calls `put(data, size, done)` (a write of the rest, `done` bytes in) until all `size`
/// bytes are written, again after EINTR and a short write; false when a write fails.
template <class Put>
bool put_all(const char* data, size_t size, Put put) {
  for (size_t done = 0; done < size;) {
    auto n = put(data + done, size - done, done);
    if (n < 0 && errno == EINTR) {
      continue;
    }
    if (n <= 0) {
      return false;
    }
    done += static_cast<size_t>(n);
  }
  return true;
}

/// Writes all `size` bytes of `data` to `fd`; false when a write fails (errno says why:
/// EPIPE when the reader has gone).
inline bool write_all(int fd, const char* data, size_t size) {
  return put_all(data, size, [fd](const char* p, size_t n, size_t) { return ::write(fd, p, n); });
}

/// Writes all `size` bytes of `data` to file `fd` at `offset`, as write_all does.
inline bool write_all_at(int fd, const char* data, size_t size, uint64_t offset) {
  return put_all(data, size, [fd, offset](const char* p, size_t n, size_t done) {
    return ::pwrite(fd, p, n, static_cast<off_t>(offset + done));
  });
}

} // namespace berth
