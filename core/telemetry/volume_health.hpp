#pragma once

// What berth sees is wrong with each volume beyond its record: its image, its loop device,
// its mounts and its filesystem, as the health sampler last observed them
// (apps/berthd/health_sampler), and a backend call that hung, as its volume actor says.
// The CSI services, Docker's Status, the admin API and the metrics read this table and
// never look at the host themselves: a condition is read without blocking a transition,
// and never by a scrape (docs/running.md, "Volume health").

#include <array>
#include <cstddef>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <vector>

namespace berth {

/// Why a volume is abnormal. berth_volume_abnormal{reason} counts volumes by these names.
enum class abnormal_reason : uint8_t {
  image_missing,        ///< the image file is gone
  image_short,          ///< the image is shorter than the record's size
  image_replaced,       ///< the loop device holds a file that is not the image any more
  device_detached,      ///< in use, and no loop device holds the image
  mount_gone,           ///< the staging mount, Docker's mount or a publication is gone
  mount_foreign,        ///< something other than the volume's device is mounted there
  filesystem_shut_down, ///< the filesystem answers EIO (xfs shutdown, ext4 shutdown)
  filesystem_errors,    ///< ext4 recorded errors (/sys/fs/ext4/DEV/errors_count)
  filesystem_read_only, ///< the filesystem went read-only under a read-write stage
  modify_failing,       ///< its last modifications (expand, modify) all failed
  call_hung,            ///< a backend call did not return within its timeout
};

inline constexpr size_t abnormal_reason_count = 11;

/// How many modifications of a volume in a row must fail before it is abnormal: one
/// failure is the caller's to retry; a resizer that keeps retrying in vain is not.
inline constexpr int modify_failures_abnormal = 3;

/// The metric label and the admin API's name of `r`.
const char* abnormal_reason_name(abnormal_reason r) noexcept;

/// One thing wrong with a volume, and what was seen and what to do, in words.
struct volume_condition {
  abnormal_reason reason = abnormal_reason::image_missing;
  std::string message;

  friend bool operator==(const volume_condition& a, const volume_condition& b) {
    return a.reason == b.reason && a.message == b.message;
  }
};

/// A volume's conditions, in reason order; empty: healthy.
using volume_conditions = std::vector<volume_condition>;

/// The conditions' messages joined with "; " for a client; "" when healthy.
std::string describe_conditions(const volume_conditions& c);

class volume_health {
public:
  /// The sampler's sight of every volume (those it does not name are healthy): replaces
  /// every observed condition, leaving call_hung to the actors. Logs each condition once
  /// when it begins (a warning) and once when it ends.
  void replace_observed(std::map<std::string, volume_conditions> seen);

  /// A backend call of `volume` hung (`message` says which, since when), or returned.
  void set_hung(const std::string& volume, std::string message);
  void clear_hung(const std::string& volume);

  /// A modification of `volume` failed (`error` says why) or was applied: after
  /// modify_failures_abnormal failures in a row it is abnormal until one is applied. Logs
  /// when that begins and ends.
  void modify_failed(const std::string& volume, const std::string& error);
  void modify_applied(const std::string& volume);

  /// `volume` is gone (its actor retired): what its actor marked goes with it.
  void forget(const std::string& volume);

  /// `volume`'s conditions now.
  volume_conditions of(const std::string& volume) const;

  /// How many volumes have each reason, indexed by abnormal_reason.
  std::array<int64_t, abnormal_reason_count> counts() const;

private:
  mutable std::mutex mtx_;
  /// A run of failed modifications: how many, and the last one's error.
  struct failures {
    int count = 0;
    std::string last;
  };

  std::map<std::string, volume_conditions> observed_;
  std::map<std::string, volume_condition> hung_;
  std::map<std::string, failures> modify_failures_;
};

} // namespace berth
