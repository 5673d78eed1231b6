#pragma once

// Writing a whole buffer to a file descriptor (a pipe, a file, a socket in blocking mode),
// as berthctl's and berthd's tar streams both do, or to a file at an offset.

#include <cerrno>
#include <cstddef>
#include <cstdint>

#include <unistd.h>

namespace berth {

/// Writes all `size` bytes of `data` to `fd`, again after EINTR and a short write; false
/// when a write fails (errno says why: EPIPE when the reader has gone).
inline bool write_all(int fd, const char* data, size_t size) {
  while (size > 0) {
    auto n = ::write(fd, data, size);
    if (n < 0 && errno == EINTR) {
      continue;
    }
    if (n <= 0) {
      return false;
    }
    data += n;
    size -= static_cast<size_t>(n);
  }
  return true;
}

/// Writes all `size` bytes of `data` to file `fd` at `offset`, as write_all does.
inline bool write_all_at(int fd, const char* data, size_t size, uint64_t offset) {
  while (size > 0) {
    auto n = ::pwrite(fd, data, size, static_cast<off_t>(offset));
    if (n < 0 && errno == EINTR) {
      continue;
    }
    if (n <= 0) {
      return false;
    }
    data += n;
    size -= static_cast<size_t>(n);
    offset += static_cast<uint64_t>(n);
  }
  return true;
}

} // namespace berth
