#pragma once

// The committed record of every volume, readable by any thread: each volume writes its own
// entry when its committed record changes (actors/machine/committed_record.hpp), and a list
// reads them all at once, without a message to each volume (docs/design.md, "Lists").

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

private:
  mutable std::shared_mutex mtx_;
  std::map<std::string, entry, std::less<>> records_;
};

} // namespace berth
