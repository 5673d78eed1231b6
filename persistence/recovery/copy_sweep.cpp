#include "persistence/recovery/copy_sweep.hpp"

#include <algorithm>
#include <filesystem>
#include <optional>
#include <set>

#include <spdlog/spdlog.h>
#include <sys/mount.h>

#include "backends/detail/tree_copy.hpp"
#include "backends/loop_device.hpp"
#include "backends/mountinfo.hpp"
#include "core/errors.hpp"
#include "persistence/recovery/image_sweep.hpp"

namespace fs = std::filesystem;

namespace berth {

namespace {

/// The names of the local backend's records of `kind`.
std::set<std::string> held_names(const state_snapshot& state, record_kind kind) {
  std::set<std::string> held;
  for (const auto& [name, rec] : state.volumes) {
    if (rec.backend == "local" && rec.kind == kind) {
      held.insert(name);
    }
  }
  return held;
}

/// copies_to_sweep, given the names its records hold.
std::vector<std::string> copies_among(const std::set<std::string>& held,
                                      const std::vector<copy_entry>& entries,
                                      const std::string& identity) {
  std::vector<std::string> out;
  for (const auto& entry : entries) {
    const bool orphan = entry.marked && entry.name[0] != '.' && held.count(entry.name) == 0
                        && !identity.empty() && entry.made_under == identity;
    if (detail::is_copy_temp_name(entry.name) || orphan) {
      out.push_back(entry.name);
    }
  }
  return out;
}

} // namespace

std::vector<std::string> copies_to_sweep(const state_snapshot& state, record_kind kind,
                                         const std::vector<copy_entry>& entries,
                                         const std::string& identity) {
  return copies_among(held_names(state, kind), entries, identity);
}

namespace {

/// `dir` resolved as mountinfo shows paths.
std::string resolved(const fs::path& dir) {
  std::error_code err;
  auto path = fs::weakly_canonical(fs::absolute(dir), err);
  return (err ? dir : path).string();
}

/// The host's mount points, read once and only when a sweep has something to delete:
/// with thousands of volumes mounted, each read of the table costs tens of milliseconds
/// of the start (docs/benchmarks.md, "Restart with 10,000 volumes: fewer mount table
/// reads, one copy of each record").
class lazy_mount_points {
public:
  const caf::expected<std::set<std::string>>& get() {
    if (!points_) {
      points_ = read_mount_points();
    }
    return *points_;
  }

private:
  std::optional<caf::expected<std::set<std::string>>> points_;
};

void sweep_root(const state_snapshot& state, record_kind kind, const std::string& root,
                const std::string& identity, lazy_mount_points& mounts, copy_sweep_report& report) {
  const auto held = held_names(state, kind);
  std::vector<copy_entry> entries;
  std::error_code err;
  for (const auto& entry : fs::directory_iterator(root, err)) {
    std::error_code type_err;
    if (!entry.is_directory(type_err) || entry.is_symlink(type_err)) {
      continue;
    }
    auto name = entry.path().filename().string();
    if (held.count(name) > 0) {
      // A record holds it: only a temp name could make it a candidate, never its marker.
      entries.push_back({std::move(name), false, {}});
      continue;
    }
    auto mark = detail::read_copy_marker(entry.path().string());
    entries.push_back({std::move(name), !mark.source.empty(), mark.state});
  }
  for (const auto& name : copies_among(held, entries, identity)) {
    const auto dir = root + "/" + name;
    const auto& points = mounts.get();
    if (!points) {
      spdlog::error("copy sweep: cannot read mounts, so {} is not deleted: {}", dir,
                    describe(points.error()));
      ++report.failed;
      continue;
    }
    if (!mount_at_or_under(*points, dir).empty()) {
      spdlog::error("copy sweep: {} has no {} but a mount lies under it; it is left alone", dir,
                    to_string(kind));
      ++report.failed;
      continue;
    }
    if (auto failed = detail::delete_copy(dir, "copy sweep")) {
      spdlog::error("{}", describe(failed));
      ++report.failed;
      continue;
    }
    spdlog::warn("copy sweep: deleted {}: no {} holds it (left by a snapshot, clone or import "
                 "killed before its record was saved, which no client was told of)",
                 dir, to_string(kind));
    ++report.removed;
  }
}

} // namespace

copy_sweep_report sweep_local_copies(const state_snapshot& state, const std::string& state_dir) {
  copy_sweep_report report;
  lazy_mount_points mounts;
  const auto identity = state_instance(state_dir);
  sweep_root(state, record_kind::volume, resolved(fs::path(state_dir) / "volumes"), identity,
             mounts, report);
  sweep_root(state, record_kind::snapshot, resolved(fs::path(state_dir) / "snapshots"), identity,
             mounts, report);
  return report;
}

size_t sweep_transfers(const std::vector<std::string>& dirs) {
  size_t removed = 0;
  lazy_mount_points mounts;
  for (const auto& given : dirs) {
    const auto dir = resolved(given);
    std::error_code err;
    if (!fs::is_directory(dir, err) || fs::is_empty(dir, err)) {
      continue; // nothing in it, so nothing mounted under it either
    }
    if (const auto& points = mounts.get()) {
      std::vector<std::string> under;
      for (const auto& p : *points) {
        if (p.compare(0, dir.size() + 1, dir + "/") == 0) {
          under.push_back(p);
        }
      }
      std::sort(under.rbegin(), under.rend()); // deepest first
      for (const auto& p : under) {
        if (::umount2(p.c_str(), MNT_DETACH) == 0) {
          spdlog::warn("transfer sweep: unmounted {}, left by an export or import that a crash "
                       "ended", p);
        }
      }
    }
    for (const auto& entry : fs::directory_iterator(dir, err)) {
      std::error_code type_err;
      if (entry.is_regular_file(type_err)) {
        if (auto device = find_loop_device(entry.path().string()); device && !device->empty()) {
          if (auto failed = detach_loop_device(*device)) {
            spdlog::error("transfer sweep: cannot detach {} from {}: {}", *device,
                          entry.path().string(), describe(failed));
            continue;
          }
        }
      }
      std::error_code gone;
      fs::remove_all(entry.path(), gone);
      if (gone) {
        spdlog::error("transfer sweep: cannot delete {}: {}", entry.path().string(),
                      gone.message());
        continue;
      }
      spdlog::warn("transfer sweep: deleted {}, left by an export or import that a crash ended",
                   entry.path().string());
      ++removed;
    }
  }
  return removed;
}

} // namespace berth
