#include "backends/detail/tree_copy.hpp"

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "backends/helper_process.hpp"
#include "core/crash_point.hpp"
#include "core/errors.hpp"

namespace fs = std::filesystem;

namespace berth::detail {

namespace {

caf::error failure(const std::string& what, const std::string& step, int e) {
  return make_error(ec::backend_failure, what + ": " + step + ": " + std::strerror(e));
}

/// fsync of the directory `dir`, or syncfs of the filesystem it lies on.
caf::error flush(const std::string& dir, bool whole_filesystem, const std::string& what) {
  int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) {
    return failure(what, "cannot open " + dir, errno);
  }
  int rc = whole_filesystem ? ::syncfs(fd) : ::fsync(fd);
  int e = errno;
  ::close(fd);
  if (rc != 0) {
    return failure(what, std::string{whole_filesystem ? "syncfs" : "fsync"} + " of " + dir, e);
  }
  return {};
}

/// The copy's contents in `temp`: data/, mnt/ when asked, and the marker.
caf::error fill(const std::string& source_data, const std::string& temp, const std::string& source,
                bool with_mountpoint, std::chrono::milliseconds timeout, const std::string& what) {
  if (::mkdir(temp.c_str(), 0755) != 0) {
    return failure(what, "cannot create " + temp, errno);
  }
  auto copied = run_helper_checked({"cp", "-a", "--reflink=auto", "--sparse=always",
                                    "--one-file-system", "--", source_data, temp + "/data"},
                                   timeout, what + ": copy of " + source_data + " failed");
  if (!copied) {
    return copied.error();
  }
  if (with_mountpoint && ::mkdir((temp + "/mnt").c_str(), 0755) != 0) {
    return failure(what, "cannot create " + temp + "/mnt", errno);
  }
  std::ofstream marker(temp + "/" + copy_marker);
  marker << source << "\n";
  if (!marker.flush()) {
    return make_error(ec::backend_failure, what + ": cannot write " + temp + "/" + copy_marker);
  }
  // Everything cp wrote, before the rename makes it the copy.
  return flush(temp, true, what);
}

} // namespace

std::string copy_temp_path(const std::string& final_dir) {
  // Unique per call: a copy that outlived its caller's timeout must never rename a
  // retry's half-made copy (or have its own deleted) under the final name.
  static std::atomic<uint64_t> next{0};
  fs::path p(final_dir);
  return (p.parent_path()
          / ("." + p.filename().string() + ".tmp." + std::to_string(::getpid()) + "."
             + std::to_string(++next)))
    .string();
}

bool is_copy_temp_name(const std::string& name) {
  return name.size() > 1 && name[0] == '.' && name.find(".tmp.") != std::string::npos;
}

caf::error copy_directory_volume(const std::string& source_data, const std::string& final_dir,
                                 const std::string& source, bool with_mountpoint,
                                 std::chrono::milliseconds timeout, const std::string& what) {
  std::error_code err;
  fs::create_directories(fs::path(final_dir).parent_path(), err);
  if (err) {
    return make_error(ec::backend_failure, what + ": cannot create "
                                             + fs::path(final_dir).parent_path().string() + ": "
                                             + err.message());
  }
  const auto temp = copy_temp_path(final_dir);
  auto drop_temp = [&temp] {
    std::error_code ignored;
    fs::remove_all(temp, ignored); // never mounted: made here, and never handed out
  };
  if (auto failed = fill(source_data, temp, source, with_mountpoint, timeout, what)) {
    drop_temp();
    return failed;
  }
  // A crash here leaves a temp copy, which the start-up sweep deletes.
  test_crash_point("dir-copy-made");
  if (::renameat2(AT_FDCWD, temp.c_str(), AT_FDCWD, final_dir.c_str(), RENAME_NOREPLACE) != 0) {
    int e = errno;
    drop_temp();
    return failure(what, "cannot rename " + temp + " to " + final_dir, e);
  }
  return flush(fs::path(final_dir).parent_path().string(), false, what);
}

} // namespace berth::detail
