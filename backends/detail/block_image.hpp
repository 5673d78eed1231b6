#pragma once

// Image files of the block backend: made under a temp name, fsynced, renamed,
// so a crash never leaves a half-written image under its final name.

#include <chrono>
#include <cstdint>
#include <functional>
#include <string>

#include <caf/error.hpp>
#include <caf/expected.hpp>

namespace berth {

/// Size of the file at `path`; ec::not_found naming it when it is missing.
caf::expected<uint64_t> block_image_size(const std::string& path);

/// A fresh path to build an image at before the rename: DIR/.NAME.tmp.PID.N. A
/// volume name never starts with '.', so it can never be another volume's image.
std::string block_image_temp_path(const std::string& image);

/// True for the file name of a temp image block_image_temp_path makes (".NAME.tmp.*"): a
/// copy or create that never reached its rename, so never any volume's image.
bool is_block_image_temp_name(const std::string& file_name);

/// Creates a sparse image of `size` bytes at `image` (its directory too).
caf::error create_sparse_block_image(const std::string& image, uint64_t size,
                                     const std::string& what);

/// Copies `source` to `image` (through the temp name) with
/// `cp --reflink=auto --sparse=always` (the helper is killed after `timeout`),
/// grows the copy to `min_size` when that is larger, fsyncs it and renames it.
/// When a loop device backs `source` and a filesystem on it is mounted, that
/// filesystem is frozen (FIFREEZE) for the copy, so the copy holds a clean filesystem
/// with everything written before it; a freeze the kernel refuses fails the copy.
/// Returns the copy's volume_record::consistency: copy_crash_consistent when a loop
/// device backed `source` with no filesystem mounted (a raw block volume, whose writers
/// nothing stops), else "".
caf::expected<std::string> copy_block_image(const std::string& source, const std::string& image,
                                            uint64_t min_size, std::chrono::milliseconds timeout,
                                            const std::string& what);

/// Replaces `image`, which nothing may have attached, by an edited copy of it: copied as
/// copy_block_image copies (reflinked where it can be), `edit` run on the copy's path, the
/// copy fsynced and renamed over `image`. When `edit` fails, `deadline` passed before the
/// rename (ec::timeout), or a crash comes first, the copy is a temp file (deleted, or swept
/// at start) and `image` is as it was.
caf::error rewrite_block_image(const std::string& image,
                               const std::function<caf::error(const std::string& copy)>& edit,
                               std::chrono::steady_clock::time_point deadline,
                               const std::string& what);

/// Grows (never shrinks) the file at `image` to `size` and fsyncs it.
caf::error grow_block_image(const std::string& image, uint64_t size, const std::string& what);

/// Gives back the tail of `image` beyond `size` bytes, and fsyncs it. Only for a tail
/// that no filesystem uses: a growth whose filesystem could not grow into it.
caf::error shrink_block_image(const std::string& image, uint64_t size, const std::string& what);

/// Deletes `image` and its temp file; missing is success. Fsyncs the directory.
caf::error remove_block_image(const std::string& image, const std::string& what);

} // namespace berth
