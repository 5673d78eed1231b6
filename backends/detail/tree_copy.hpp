#pragma once

// A directory volume's copy (a snapshot of it, or a volume cloned from it or restored
// from a snapshot): the tree is copied under a temp name, flushed, and renamed, so a
// crash never leaves a half copy under its final name.

#include <chrono>
#include <string>

#include <caf/error.hpp>

namespace berth::detail {

/// The file berth writes into every directory it made by a copy, naming the source. The
/// start-up sweep deletes such a directory when no record holds it (a copy killed between
/// its rename and its record), and never one without the file.
inline constexpr const char* copy_marker = "copied-from";

/// A fresh path to build `final_dir` at before its rename: PARENT/.NAME.tmp.PID.N. A
/// volume name never starts with '.', so it is never another volume's directory.
std::string copy_temp_path(const std::string& final_dir);

/// True for the name of a directory copy_temp_path makes: a copy that never reached its
/// rename, which no record can hold.
bool is_copy_temp_name(const std::string& name);

/// Makes `final_dir` (which must not exist) a directory with `data/`, a copy of the tree
/// `source_data`, and the copy_marker naming `source`. `cp -a --reflink=auto
/// --sparse=always --one-file-system` copies owners, modes, times, hard links, symlinks,
/// special files and extended attributes, and shares blocks with the source where the
/// filesystem can; the helper is killed after `timeout`. With `with_mountpoint`, an empty
/// `mnt/` (0755) is made too. The copy is flushed (syncfs) before the rename, and the
/// parent directory after it. A failure deletes the temp copy.
caf::error copy_directory_volume(const std::string& source_data, const std::string& final_dir,
                                 const std::string& source, bool with_mountpoint,
                                 std::chrono::milliseconds timeout, const std::string& what);

} // namespace berth::detail
