#include "persistence/recovery/node_sweep.hpp"

#include <algorithm>
#include <filesystem>
#include <set>

#include <spdlog/spdlog.h>

#include "backends/block_backend.hpp"
#include "backends/loop_device.hpp"
#include "core/errors.hpp"

namespace berth {

namespace {

bool below(const std::string& path, const std::string& dir) {
  auto prefix = dir.empty() || dir.back() != '/' ? dir + "/" : dir;
  return path.size() > prefix.size() && path.compare(0, prefix.size(), prefix) == 0;
}

/// Loop device → the record whose image it holds (or which recorded it).
std::map<std::string, const volume_record*>
devices_of_records(const state_snapshot& state, const loop_list& loops,
                   const std::function<std::string(const volume_record&)>& image_of) {
  std::map<std::string, const volume_record*> image_owner;
  std::map<std::string, const volume_record*> owner;
  for (const auto& [name, rec] : state.volumes) {
    if (rec.backend != "block") {
      continue; // only the block backend mounts loop devices
    }
    if (auto image = image_of(rec); !image.empty()) {
      image_owner[image] = &rec;
    }
    if (!rec.device.empty()) {
      owner[rec.device] = &rec;
    }
  }
  for (const auto& [device, backing] : loops) {
    if (auto it = image_owner.find(backing); it != image_owner.end()) {
      owner[device] = it->second;
    }
  }
  return owner;
}

} // namespace

std::vector<stray_node_mount>
node_mounts_to_sweep(const state_snapshot& state, const std::vector<mount_entry>& mounts,
                     const loop_list& loops,
                     const std::function<std::string(const volume_record&)>& image_of,
                     const std::string& kubelet_dir) {
  auto owner = devices_of_records(state, loops, image_of);
  std::vector<stray_node_mount> out;
  std::set<std::string> chosen;
  for (const auto& m : mounts) {
    auto it = owner.find(m.source);
    if (it == owner.end() || !below(m.mount_point, kubelet_dir)) {
      continue;
    }
    const auto& rec = *it->second;
    if (m.mount_point == rec.staging_path || rec.published.count(m.mount_point) > 0) {
      continue;
    }
    if (!chosen.insert(m.mount_point).second) {
      continue; // stacked twice: one unmount call takes this volume's mounts there
    }
    out.push_back({rec.name, m.mount_point, !rec.staging_path.empty()});
  }
  std::stable_partition(out.begin(), out.end(),
                        [](const stray_node_mount& s) { return s.publication; });
  return out;
}

node_sweep_report sweep_node_mounts(const state_snapshot& state,
                                    const std::map<std::string, std::shared_ptr<backend>>& backends,
                                    const std::string& kubelet_dir) {
  node_sweep_report report;
  auto* block = block_backend_of(backends);
  if (block == nullptr || kubelet_dir.empty()) {
    return report;
  }
  auto mounts = read_mountinfo();
  if (!mounts) {
    spdlog::error("node sweep: cannot read mountinfo: {}", describe(mounts.error()));
    ++report.failed;
    return report;
  }
  // mountinfo spells paths resolved; the option may name a symlink.
  std::error_code ec;
  auto dir = std::filesystem::weakly_canonical(kubelet_dir, ec).string();
  auto image_of = [block](const volume_record& rec) { return block->image_path(rec); };
  for (const auto& stray :
       node_mounts_to_sweep(state, *mounts, list_loop_devices(), image_of, ec ? kubelet_dir : dir)) {
    const auto& rec = state.volumes.at(stray.volume);
    auto err = stray.publication ? block->unpublish(rec, stray.mount_point)
                                 : block->sweep_staging(rec, stray.mount_point);
    const char* what = stray.publication ? "publication" : "staging";
    if (err) {
      spdlog::error("node sweep: volume {}: cannot take away the {} at {}, which its record "
                    "lacks: {}",
                    rec.name, what, stray.mount_point, describe(err));
      ++report.failed;
      continue;
    }
    spdlog::warn("node sweep: volume {}: took away the {} at {}: its record lacks it (left by "
                 "a crash between its mount and its commit)",
                 rec.name, what, stray.mount_point);
    ++report.unmounted;
  }
  return report;
}

} // namespace berth
