#pragma once

// The block map of a snapshot image, for changed block tracking (docs/design.md, "Changed
// block tracking"): the ranges of one image that hold data, and the ranges in which two
// images of the same volume differ. Plain file reads, no actor: the CSI SnapshotMetadata
// service and berthctl's snapshot diff page through them.
//
//   allocated: SEEK_DATA and SEEK_HOLE, so the ranges are the file system's extents.
//   changed:   over the ranges where either image holds data, block by block
//              (delta_block_bytes): a block both map to the same physical extent (FIEMAP;
//              reflinked copies share them) is unchanged without a read; any other is
//              read from both and compared. Exact either way, and cheap where shared.

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include <caf/expected.hpp>

#include "core/unique_fd.hpp"

namespace berth {

/// The granularity of a delta: 64 KiB, sixteen 4-KiB file system blocks. Finer would list
/// more ranges for the same change (a backup tool pays per range), coarser would copy more
/// unchanged bytes; the ranges are merged runs of it, clipped to the image's size.
inline constexpr uint64_t delta_block_bytes = uint64_t{64} * 1024;

/// [offset, offset + length).
struct byte_range {
  uint64_t offset = 0;
  uint64_t length = 0;

  uint64_t end() const { return offset + length; }
  bool operator==(const byte_range& o) const { return offset == o.offset && length == o.length; }
};

/// One page of ranges, in ascending order, none overlapping: the next page starts at
/// `next`; `done` when nothing lies beyond it.
struct range_page {
  std::vector<byte_range> ranges;
  uint64_t next = 0;
  bool done = false;
};

/// An image file opened read-only. A snapshot's image never changes, and one deleted while
/// it is open is still read whole.
class image_map {
public:
  /// `path`, opened without following a symlink.
  static caf::expected<image_map> open(const std::string& path);

  uint64_t size() const { return size_; }
  int fd() const { return fd_.get(); }
  const std::string& path() const { return path_; }

  /// The ranges that hold data, from `from` (a range that began before it starts at it),
  /// at most `max` of them (at least one).
  caf::expected<range_page> allocated(uint64_t from, size_t max) const;

private:
  image_map(unique_fd fd, uint64_t size, std::string path)
      : fd_(std::move(fd)), size_(size), path_(std::move(path)) {}

  unique_fd fd_;
  uint64_t size_ = 0;
  std::string path_;
};

/// What a delta cost: blocks found unchanged by their shared extent, and blocks read from
/// both images.
struct delta_cost {
  uint64_t shared_blocks = 0;
  uint64_t read_blocks = 0;
};

/// The ranges, from `from`, in which `target` differs from `base` (an earlier image of the
/// same volume; a target grown past it differs wherever it holds data there), at most
/// `max` (at least one), in runs of delta_block_bytes clipped to target's size. `cost`,
/// when given, adds up what it took.
caf::expected<range_page> changed_ranges(const image_map& base, const image_map& target,
                                         uint64_t from, size_t max, delta_cost* cost = nullptr);

} // namespace berth
