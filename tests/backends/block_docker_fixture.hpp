#pragma once

// What the tests of the block backend's Docker volumes share: a Docker record as the
// volume actor makes it, and the root fixture with a create and a fill helper.

#include <cerrno>
#include <utility>
#include <vector>

#include <fcntl.h>
#include <unistd.h>

#include "tests/backends/block_fixture.hpp"

namespace berth::block_test {

inline volume_record docker_record(const std::string& name, option_map options) {
  volume_record rec;
  rec.name = name;
  rec.backend = "block";
  rec.owner = record_owner::docker;
  rec.options = std::move(options);
  return rec;
}

class block_docker_test : public block_backend_test {
protected:
  /// A Docker record as the volume actor makes it at Create: capacity from the options.
  volume_record created(const std::string& name, option_map options) {
    auto rec = docker_record(name, options);
    auto capacity = backend_->validate_docker(name, options);
    EXPECT_TRUE(capacity) << describe(capacity.error());
    rec.capacity_bytes = capacity ? *capacity : 0;
    auto err = backend_->create(rec);
    EXPECT_FALSE(err) << describe(err);
    return rec;
  }

  /// Writes zeros to `file` until the filesystem refuses; the bytes written and the
  /// errno that stopped it.
  std::pair<uint64_t, int> fill(const std::string& file, uint64_t most) {
    int fd = ::open(file.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    EXPECT_GE(fd, 0) << file;
    std::vector<char> chunk(1 << 20, 0);
    uint64_t written = 0;
    int stopped = 0;
    while (written < most) {
      auto n = ::write(fd, chunk.data(), chunk.size());
      if (n < 0) {
        stopped = errno;
        break;
      }
      written += static_cast<uint64_t>(n);
    }
    if (stopped == 0 && ::fsync(fd) != 0) {
      stopped = errno;
    }
    ::close(fd);
    return {written, stopped};
  }
};

} // namespace berth::block_test
