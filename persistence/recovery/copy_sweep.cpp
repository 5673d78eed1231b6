#include "persistence/recovery/copy_sweep.hpp"

#include <filesystem>
#include <set>

#include <spdlog/spdlog.h>

#include "backends/detail/tree_copy.hpp"
#include "backends/mountinfo.hpp"
#include "core/errors.hpp"

namespace fs = std::filesystem;

namespace berth {

std::vector<std::string> copies_to_sweep(const state_snapshot& state, record_kind kind,
                                         const std::vector<copy_entry>& entries) {
  std::set<std::string> held;
  for (const auto& [name, rec] : state.volumes) {
    if (rec.backend == "local" && rec.kind == kind) {
      held.insert(name);
    }
  }
  std::vector<std::string> out;
  for (const auto& entry : entries) {
    if (detail::is_copy_temp_name(entry.name)
        || (entry.marked && entry.name[0] != '.' && held.count(entry.name) == 0)) {
      out.push_back(entry.name);
    }
  }
  return out;
}

namespace {

/// True when a mount lies at `dir` or under it: remove_all would descend into it.
bool has_mount_under(const std::set<std::string>& points, const std::string& dir) {
  for (const auto& p : points) {
    if (p == dir || p.compare(0, dir.size() + 1, dir + "/") == 0) {
      return true;
    }
  }
  return false;
}

void sweep_root(const state_snapshot& state, record_kind kind, const fs::path& root,
                const std::set<std::string>& points, copy_sweep_report& report) {
  std::vector<copy_entry> entries;
  std::error_code err;
  for (const auto& entry : fs::directory_iterator(root, err)) {
    std::error_code type_err;
    if (!entry.is_directory(type_err) || entry.is_symlink(type_err)) {
      continue;
    }
    entries.push_back({entry.path().filename().string(),
                       fs::exists(entry.path() / detail::copy_marker, type_err)});
  }
  for (const auto& name : copies_to_sweep(state, kind, entries)) {
    const auto dir = (root / name).string();
    if (has_mount_under(points, dir)) {
      spdlog::error("copy sweep: {} has no {} but a mount lies under it; it is left alone", dir,
                    to_string(kind));
      ++report.failed;
      continue;
    }
    std::error_code removed;
    fs::remove_all(dir, removed); // does not follow symlinks
    if (removed) {
      spdlog::error("copy sweep: cannot delete {}, which no {} holds: {}", dir, to_string(kind),
                    removed.message());
      ++report.failed;
      continue;
    }
    spdlog::warn("copy sweep: deleted {}: no {} holds it (left by a snapshot or clone killed "
                 "before its record was saved, which no client was told of)",
                 dir, to_string(kind));
    ++report.removed;
  }
}

} // namespace

copy_sweep_report sweep_local_copies(const state_snapshot& state, const std::string& state_dir) {
  copy_sweep_report report;
  // mountinfo shows resolved paths, as the local backend's own are.
  std::error_code err;
  fs::path root = fs::weakly_canonical(fs::absolute(state_dir), err);
  if (err) {
    root = state_dir;
  }
  auto points = read_mount_points();
  if (!points) {
    spdlog::error("copy sweep: cannot read mounts, so no copy is deleted: {}",
                  describe(points.error()));
    return report;
  }
  sweep_root(state, record_kind::volume, root / "volumes", *points, report);
  sweep_root(state, record_kind::snapshot, root / "snapshots", *points, report);
  return report;
}

} // namespace berth
