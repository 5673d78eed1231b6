#pragma once

#include <string>
#include <vector>

#include <caf/expected.hpp>

namespace berth {

/// Mount flags of a CSI volume capability, split for mount(2).
struct block_mount_options {
  unsigned long flags = 0; ///< MS_* bits (ro, noatime, nodev, nosuid, noexec, sync, ...)
  std::string data;        ///< filesystem options, comma separated (discard, data=ordered, ...)
};

/// Checks `flags` against the allow-list and maps them: the generic ones
/// (ro, rw, noatime, nodiratime, relatime, strictatime, lazytime, nodev, nosuid,
/// noexec, sync, dirsync, and their no-op opposites) to MS_* bits, a short list
/// of xfs/ext4 options to the data string. An entry may hold several flags
/// separated by commas. Anything else is ec::invalid_argument naming the flag
/// and `what` (e.g. "volume v1").
caf::expected<block_mount_options> parse_block_mount_flags(const std::vector<std::string>& flags,
                                                           const std::string& what);

/// `opts` with "discard" added unless they name "discard" or "nodiscard": a block volume
/// hands the blocks its filesystem frees back to the host as they are freed (the loop
/// device punches holes in the image), and `nodiscard` opts out (docs/benchmarks.md,
/// "Space given back").
block_mount_options with_online_discard(block_mount_options opts);

/// Appends `option` to a comma-separated data string.
void append_mount_data(std::string& data, const std::string& option);

} // namespace berth
