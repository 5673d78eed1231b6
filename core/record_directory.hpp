#pragma once

// The committed record of every volume, readable by any thread: each volume writes its own
// entry when its committed record changes (actors/machine/committed_record.hpp), and a list
// reads them all at once, without a message to each volume (docs/design.md, "Lists").

#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <shared_mutex>
#include <string>
#include <vector>

#include "core/volume_record.hpp"

namespace berth {

class record_directory {
public:
  using entry = std::shared_ptr<const volume_record>;

  /// `rec` is the committed record of the volume it names.
  void put(entry rec);

  /// The volume `name` holds no record any more.
  void erase(const std::string& name);

  /// The record of `name`; null when no volume of that name exists.
  entry find(const std::string& name) const;

  /// Every record, sorted by name: shared, not copied, so a list of 10,000 holds the lock
  /// only while it copies 10,000 pointers.
  shared_records all() const;

  /// Moves on every put and erase: two reads at one generation read the same records, so
  /// an answer made from them stays exact while the generation stays (directory_memo).
  uint64_t generation() const { return generation_.load(); }

  /// all(), and the generation it read.
  struct snapshot {
    shared_records records;
    uint64_t generation = 0;
  };
  snapshot read() const;

private:
  mutable std::shared_mutex mtx_;
  std::map<std::string, entry, std::less<>> records_;
  /// Written under the lock, with the records; read without it, since a put that returned
  /// before a reader started is seen by it either way.
  std::atomic<uint64_t> generation_{0};
};

} // namespace berth
