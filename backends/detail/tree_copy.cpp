#include "backends/detail/tree_copy.hpp"

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>

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

/// A directory's contents in `temp`: data/ (made by `fill`), mnt/ when asked, the marker.
caf::error fill(const std::string& temp, const copy_mark& mark, bool with_mountpoint,
                const std::function<caf::error(const std::string&)>& fill_data,
                const std::string& what) {
  if (::mkdir(temp.c_str(), 0755) != 0) {
    return failure(what, "cannot create " + temp, errno);
  }
  if (auto err = fill_data(temp + "/data")) {
    return err;
  }
  if (with_mountpoint && ::mkdir((temp + "/mnt").c_str(), 0755) != 0) {
    return failure(what, "cannot create " + temp + "/mnt", errno);
  }
  std::ofstream marker(temp + "/" + copy_marker);
  marker << mark.source << "\n" << mark.state << "\n";
  if (!marker.flush()) {
    return make_error(ec::backend_failure, what + ": cannot write " + temp + "/" + copy_marker);
  }
  // Everything written, before the rename makes it the directory.
  return flush_directory(temp, true, what);
}

/// Builds `final_dir` under a temp name with fill(), then renames it into place.
caf::error build(const std::string& final_dir, const copy_mark& mark, bool with_mountpoint,
                 const std::function<caf::error(const std::string&)>& fill_data,
                 const std::string& what) {
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
  if (auto failed = fill(temp, mark, with_mountpoint, fill_data, what)) {
    drop_temp();
    return failed;
  }
  // A crash here leaves a temp directory, which the start-up sweep deletes.
  test_crash_point("dir-copy-made");
  test_hold_point("dir-copy-made");
  if (::renameat2(AT_FDCWD, temp.c_str(), AT_FDCWD, final_dir.c_str(), RENAME_NOREPLACE) != 0) {
    int e = errno;
    drop_temp();
    if (e == EEXIST) {
      return make_error(ec::already_exists, what + ": " + final_dir + " exists already, and "
                                              "no copy of berth's made it; berth leaves it "
                                              "alone: move it away, then retry");
    }
    return failure(what, "cannot rename " + temp + " to " + final_dir, e);
  }
  return flush_directory(fs::path(final_dir).parent_path().string(), false, what);
}

} // namespace

caf::error flush_directory(const std::string& dir, bool whole_filesystem, const std::string& what) {
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

copy_mark read_copy_marker(const std::string& dir) {
  copy_mark mark;
  std::ifstream in(dir + "/" + copy_marker);
  std::getline(in, mark.source);
  std::getline(in, mark.state);
  return mark;
}

std::string read_state_identity(const std::string& state_dir) {
  std::string id;
  std::ifstream in(state_dir + "/state/instance-id");
  std::getline(in, id);
  return id;
}

caf::error delete_copy(const std::string& dir, const std::string& what) {
  const auto doomed = copy_temp_path(dir);
  if (::rename(dir.c_str(), doomed.c_str()) != 0) {
    int e = errno;
    if (e == ENOENT) {
      return {};
    }
    return failure(what, "cannot rename " + dir + " to " + doomed + " to delete it", e);
  }
  std::error_code err;
  fs::remove_all(doomed, err); // does not follow symlinks
  if (err) {
    return make_error(ec::backend_failure, what + ": cannot delete " + doomed + " (was " + dir
                                             + "): " + err.message());
  }
  return {};
}

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
                                 const copy_mark& mark, bool with_mountpoint,
                                 std::chrono::milliseconds timeout, const std::string& what) {
  return build(final_dir, mark, with_mountpoint, [&](const std::string& data) -> caf::error {
    auto copied = run_helper_checked({"cp", "-a", "--reflink=auto", "--sparse=always",
                                      "--one-file-system", "--", source_data, data},
                                     timeout, what + ": copy of " + source_data + " failed");
    return copied ? caf::error{} : copied.error();
  }, what);
}

caf::error adopt_directory_volume(const std::string& tree, const std::string& final_dir,
                                  const copy_mark& mark, const std::string& what) {
  return build(final_dir, mark, true, [&](const std::string& data) -> caf::error {
    if (::rename(tree.c_str(), data.c_str()) != 0) {
      return failure(what, "cannot move " + tree + " to " + data, errno);
    }
    return {};
  }, what);
}

} // namespace berth::detail
