#pragma once

// A directory volume's copy (a snapshot of it, a volume cloned from it or restored from a
// snapshot, an export's copy) or import: the tree is copied or moved under a temp name,
// flushed, and renamed, so a crash never leaves a half copy under its final name.

#include <chrono>
#include <string>

#include <caf/error.hpp>

namespace berth::detail {

/// The file berth writes into every directory it made by a copy or an import: its source,
/// and the state it was made under. The start-up sweep deletes such a directory when no
/// record holds it (a copy killed between its rename and its record) and it was made
/// under this state, and never one without the file.
inline constexpr const char* copy_marker = "copied-from";

/// What a copy_marker says: "" for both when there is none.
struct copy_mark {
  std::string source; ///< "volume:NAME", "snapshot:NAME" or "import"
  std::string state;  ///< the state's identity (STATE/state/instance-id) then
};

/// The copy_marker of `dir`.
copy_mark read_copy_marker(const std::string& dir);

/// The identity of the state at `state_dir` (STATE/state/instance-id); "" when it has none.
std::string read_state_identity(const std::string& state_dir);

/// Deletes `dir`, a directory of berth's: renamed to a temp name first, so that a crash
/// during the deletion leaves a temp directory the sweep deletes, never a part of `dir`
/// without its marker.
caf::error delete_copy(const std::string& dir, const std::string& what);

/// fsync of the directory `dir` (its entries durable), or with `whole_filesystem` syncfs
/// of the filesystem it lies on (everything written to it durable).
caf::error flush_directory(const std::string& dir, bool whole_filesystem, const std::string& what);

/// A fresh path to build `final_dir` at before its rename: PARENT/.NAME.tmp.PID.N. A
/// volume name never starts with '.', so it is never another volume's directory.
std::string copy_temp_path(const std::string& final_dir);

/// True for the name of a directory copy_temp_path makes: a copy that never reached its
/// rename, which no record can hold.
bool is_copy_temp_name(const std::string& name);

/// Makes `final_dir` (which must not exist) a directory with `data/`, a copy of the tree
/// `source_data`, and the copy_marker saying `mark`. `cp -a --reflink=auto
/// --sparse=always --one-file-system` copies owners, modes, times, hard links, symlinks,
/// special files and extended attributes, and shares blocks with the source where the
/// filesystem can; the helper is killed after `timeout`. With `with_mountpoint`, an empty
/// `mnt/` (0755) is made too. The copy is flushed (syncfs) before the rename, and the
/// parent directory after it. A failure deletes the temp copy.
caf::error copy_directory_volume(const std::string& source_data, const std::string& final_dir,
                                 const copy_mark& mark, bool with_mountpoint,
                                 std::chrono::milliseconds timeout, const std::string& what);

/// Makes `final_dir` (which must not exist) a directory volume whose `data/` is the
/// directory `tree`, moved there (it must lie on the same filesystem), with `mnt/` and the
/// copy_marker saying `mark`; flushed and renamed as copy_directory_volume's copy is.
caf::error adopt_directory_volume(const std::string& tree, const std::string& final_dir,
                                  const copy_mark& mark, const std::string& what);

} // namespace berth::detail
