#pragma once

// Each mounted block volume's used bytes and its limit, as the usage sampler last read
// them with statvfs(3) (apps/berthd/usage_sampler), the bytes its image takes on the host,
// and whether its loop device uses direct I/O: the metrics scrape and the admin API read
// this table and never touch a filesystem themselves. A directory volume has no figure:
// measuring one would be a walk of its tree.

#include <cstdint>
#include <map>
#include <mutex>
#include <optional>
#include <string>

namespace berth {

/// Whether a volume's loop device reads and writes its image with direct I/O.
enum class direct_io_state : uint8_t { unknown, on, off };

/// One volume's figure.
struct volume_usage_figure {
  uint64_t used_bytes = 0;  ///< statvfs: (f_blocks - f_bfree) * f_frsize
  uint64_t limit_bytes = 0; ///< the volume's size (its record's capacity)
  /// The bytes its image file takes on the host (st_blocks * 512): what space a workload
  /// deleted and a trim gave back shows here, not in used_bytes. 0 when unknown.
  uint64_t allocated_bytes = 0;
  direct_io_state direct_io = direct_io_state::unknown;
};

/// The last sample of every measured volume, replaced whole by each sample.
class volume_usage {
public:
  using table = std::map<std::string, volume_usage_figure>;

  /// Replaces the table; `omitted` volumes were left out by the series bound.
  void replace(table figures, uint64_t omitted);

  /// A copy of the table.
  table snapshot() const;

  /// The figure of `volume`, if it was measured.
  std::optional<volume_usage_figure> of(const std::string& volume) const;

  /// How many mounted block volumes the last sample left out (the series bound).
  uint64_t omitted() const;

private:
  mutable std::mutex mtx_;
  table figures_;
  uint64_t omitted_ = 0;
};

} // namespace berth
