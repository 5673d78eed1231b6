#include "persistence/journal_reserve.hpp"

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <spdlog/spdlog.h>

namespace berth {

namespace {

constexpr uint64_t step_bytes = uint64_t{1} << 20;

uint64_t mib(uint64_t bytes) {
  return bytes >> 20;
}

} // namespace

journal_reserve::journal_reserve(std::string path, uint64_t target_bytes)
  : path_(std::move(path)), target_((target_bytes + step_bytes - 1) / step_bytes * step_bytes) {
}

journal_reserve::~journal_reserve() {
  if (fd_ >= 0) {
    ::close(fd_);
  }
}

bool journal_reserve::open_file() {
  if (fd_ >= 0) {
    return true;
  }
  fd_ = ::open(path_.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
  if (fd_ < 0) {
    spdlog::error("journal reserve {}: cannot open: {}", path_, std::strerror(errno));
    return false;
  }
  struct stat st {};
  if (::fstat(fd_, &st) == 0) {
    // Only what fallocate made counts: a sparse file holds nothing.
    held_ = std::min<uint64_t>(static_cast<uint64_t>(st.st_size),
                               static_cast<uint64_t>(st.st_blocks) * 512);
    held_ = held_ / step_bytes * step_bytes;
    if (static_cast<uint64_t>(st.st_size) != held_) {
      trim_to_held();
    }
  }
  return true;
}

void journal_reserve::trim_to_held() {
  // The file then says what it holds. If it cannot be cut, the next start measures the
  // blocks again (open_file), so only a stale length is left behind: worth a line, no more.
  if (::ftruncate(fd_, static_cast<off_t>(held_)) != 0) {
    spdlog::warn("journal reserve {}: cannot cut it to {} MiB: {}", path_, mib(held_),
                 std::strerror(errno));
  }
}

bool journal_reserve::refill() {
  last_refill_ = std::chrono::steady_clock::now();
  if (target_ == 0) {
    if (::unlink(path_.c_str()) == 0) {
      spdlog::info("journal reserve off: removed {}", path_);
    }
    return true;
  }
  if (!open_file()) {
    return false;
  }
  auto before = held_;
  while (held_ < target_) {
    if (::fallocate(fd_, 0, static_cast<off_t>(held_), static_cast<off_t>(step_bytes)) != 0) {
      int err = errno;
      if (err == EINTR) {
        continue;
      }
      if (err == EOPNOTSUPP) {
        // No fallocate (tmpfs supports it; some filesystems do not): write zeros instead.
        static const char zeros[1 << 16] = {};
        uint64_t done = 0;
        while (done < step_bytes) {
          auto n = ::pwrite(fd_, zeros, sizeof(zeros), static_cast<off_t>(held_ + done));
          if (n <= 0) {
            break;
          }
          done += static_cast<uint64_t>(n);
        }
        if (done < step_bytes || ::fdatasync(fd_) != 0) {
          trim_to_held();
          err = ENOSPC;
        } else {
          held_ += step_bytes;
          continue;
        }
      }
      if (!warned_short_) {
        spdlog::warn("journal reserve {}: holds {} of {} MiB: {}; it grows back when space "
                     "is freed",
                     path_, mib(held_), mib(target_), std::strerror(err));
        warned_short_ = true;
      }
      break;
    }
    held_ += step_bytes;
  }
  if (held_ > before) {
    (void)::fsync(fd_);
  }
  if (held_ >= target_) {
    if (warned_short_) {
      spdlog::info("journal reserve {}: whole again ({} MiB)", path_, mib(held_));
    }
    warned_short_ = false;
    return true;
  }
  return false;
}

void journal_reserve::refill_now_and_then(std::chrono::seconds every) {
  if (target_ == 0 || held_ >= target_) {
    return;
  }
  if (std::chrono::steady_clock::now() - last_refill_ < every) {
    return;
  }
  refill();
}

uint64_t journal_reserve::release(uint64_t bytes) {
  if (held_ == 0 || !open_file()) {
    return 0;
  }
  auto want = std::max<uint64_t>(step_bytes, (bytes + step_bytes - 1) / step_bytes * step_bytes);
  auto keep = held_ > want ? held_ - want : 0;
  // The fsync commits the truncation: ext4 hands freed blocks out only after that.
  if (::ftruncate(fd_, static_cast<off_t>(keep)) != 0 || ::fsync(fd_) != 0) {
    spdlog::error("journal reserve {}: cannot release space: {}", path_, std::strerror(errno));
    return 0;
  }
  auto freed = held_ - keep;
  held_ = keep;
  warned_short_ = false;
  last_refill_ = std::chrono::steady_clock::now();
  return freed;
}

} // namespace berth
