#pragma once

#include <chrono>
#include <cstdint>
#include <string>

namespace berth {

/// A preallocated file beside the journal (STATE/state/reserve) that keeps room for
/// journal appends and compaction on a full filesystem. Volumes (thin images, local
/// directories) may share that filesystem; when they fill it, the store releases part of
/// the reserve, retries, and the reserve is grown back once space allows.
/// Not thread-safe: the file_store that owns it is used by one thread at a time.
class journal_reserve {
public:
  /// Nothing is allocated before refill(). `target_bytes` 0 turns the reserve off (and
  /// refill() removes a reserve file left by an earlier configuration).
  journal_reserve(std::string path, uint64_t target_bytes);
  ~journal_reserve();

  journal_reserve(const journal_reserve&) = delete;
  journal_reserve& operator=(const journal_reserve&) = delete;

  /// Grows the file towards its target in 1 MiB steps with fallocate; a full filesystem
  /// leaves it smaller (logged). Returns true when the whole target is held.
  bool refill();

  /// refill(), at most once per `every` while the reserve is short.
  void refill_now_and_then(std::chrono::seconds every = std::chrono::seconds(5));

  /// Frees at least `bytes` (rounded up to whole MiB) of the reserve, or all that is left,
  /// and makes the freed space usable (truncate + fsync). Returns the bytes freed: 0 when
  /// the reserve is empty or cannot be shrunk.
  uint64_t release(uint64_t bytes);

  /// Bytes currently held.
  uint64_t held() const {
    return held_;
  }

  /// Bytes the reserve is meant to hold.
  uint64_t target() const {
    return target_;
  }

  /// The reserve file.
  const std::string& path() const {
    return path_;
  }

private:
  bool open_file();
  // Cuts the file to held_ bytes (what fallocate really made), logging a failure.
  void trim_to_held();

  std::string path_;
  uint64_t target_;
  int fd_ = -1;
  uint64_t held_ = 0;
  bool warned_short_ = false;
  std::chrono::steady_clock::time_point last_refill_{};
};

} // namespace berth
