#pragma once

// The logical block size a loop device gets for an image: a filesystem cannot be mounted on
// blocks larger than its own, so an image that holds one keeps the size it was made for.

#include <cstdint>
#include <string>

namespace berth {

/// The logical block size to attach `image` with, from what it holds: 4096 for an image
/// with no data yet (a new volume: the filesystem made on it then does 4 KiB I/O, and
/// direct I/O works on a disk of 4 KiB sectors too); an xfs image's sector size or an
/// ext2/3/4 image's block size, at most 4096; 512, the kernel's default and what every
/// image was attached with before, for anything else (a raw block volume's own data).
uint32_t loop_block_size_for(const std::string& image);

} // namespace berth
