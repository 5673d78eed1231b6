// Which logical block size an image is attached with, read from what it holds
// (backends/loop_block_size.hpp).

#include "backends/loop_block_size.hpp"

#include <algorithm>
#include <cerrno>
#include <cstring>

#include <fcntl.h>
#include <unistd.h>

namespace berth {

namespace {

/// Little- and big-endian fields of a superblock.
uint32_t le32(const unsigned char* p) {
  return uint32_t{p[0]} | uint32_t{p[1]} << 8 | uint32_t{p[2]} << 16 | uint32_t{p[3]} << 24;
}
uint32_t be16(const unsigned char* p) {
  return uint32_t{p[0]} << 8 | uint32_t{p[1]};
}

} // namespace

uint32_t loop_block_size_for(const std::string& image) {
  constexpr uint32_t fallback = 512;
  int fd = ::open(image.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
  if (fd < 0) {
    return fallback;
  }
  const bool empty = ::lseek(fd, 0, SEEK_DATA) < 0 && errno == ENXIO;
  unsigned char sb[2048] = {};
  auto got = empty ? 0 : ::pread(fd, sb, sizeof sb, 0);
  ::close(fd);
  if (empty) {
    return 4096; // nothing written yet: a filesystem made on it takes the device's size
  }
  uint32_t size = 0;
  if (got >= 104 && std::memcmp(sb, "XFSB", 4) == 0) {
    size = be16(sb + 102); // sb_sectsize
  } else if (got >= 1024 + 58 && sb[1024 + 56] == 0x53 && sb[1024 + 57] == 0xEF) {
    auto log = le32(sb + 1024 + 24); // s_log_block_size: 1024 << log
    size = log <= 6 ? 1024u << log : 0;
  }
  auto page = static_cast<uint32_t>(::sysconf(_SC_PAGESIZE));
  if (size < 512 || (size & (size - 1)) != 0) {
    return fallback; // raw data, or a superblock berth does not read: as it always was
  }
  return std::min({size, 4096u, page});
}

} // namespace berth
