#pragma once

// The minimum interval a backend may keep between two modifications of one volume
// (a cloud volume accepts one per cooldown: EBS, six hours), with its clock
// injectable so that tests need not wait.

#include <chrono>
#include <functional>
#include <map>
#include <mutex>
#include <string>

#include <caf/error.hpp>

#include "core/volume_record.hpp"

namespace berth {

/// What the daemon gives a backend that limits modifications (--modify-cooldown-ms).
struct cooldown_config {
  using clock_fn = std::function<std::chrono::system_clock::time_point()>;
  /// The least time between two successful modifications of one volume; 0: no limit.
  std::chrono::milliseconds interval{0};
  /// The time now; empty means std::chrono::system_clock::now (tests inject one).
  clock_fn clock;
};

/// The last successful modification of each volume, kept in memory only, as a
/// cloud provider keeps this bookkeeping on its side: berth's journal does not hold
/// it, so a restart of berthd forgets it (the provider's own limit would not be).
/// Safe to use from several threads (one volume's calls never overlap; different
/// volumes' do).
class modify_cooldown {
public:
  explicit modify_cooldown(cooldown_config config = {});

  /// The configured interval (0: none).
  std::chrono::milliseconds interval() const;

  /// ec::resource_exhausted when `volume` was modified less than interval() ago:
  /// the message names the volume (`what`, e.g. "volume v1"), the time it may be
  /// modified again (RFC 3339, UTC, rounded up to the second) and in how many
  /// seconds. Success when there is no interval or no modification yet.
  caf::error check(const std::string& volume, const std::string& what) const;

  /// A modification of `volume` that applied `parameters` succeeded now: the
  /// interval counts from here. Kept only while there is an interval.
  void record(const std::string& volume, const option_map& parameters);

  /// The parameters the modifications recorded for `volume` applied, the later
  /// ones over the earlier ones; empty when none is recorded.
  option_map applied(const std::string& volume) const;

  /// Forgets `volume` (it was removed: a volume made later under its name is another).
  void forget(const std::string& volume);

private:
  struct entry {
    std::chrono::system_clock::time_point at;
    option_map parameters;
  };

  std::chrono::system_clock::time_point now() const;

  cooldown_config config_;
  mutable std::mutex mutex_;
  std::map<std::string, entry> last_; ///< volume name -> its last successful modification
};

} // namespace berth
