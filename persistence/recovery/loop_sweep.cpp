#include "persistence/recovery/loop_sweep.hpp"

#include <map>
#include <set>

#include <spdlog/spdlog.h>

#include "backends/block_backend.hpp"
#include "backends/detail/fs_freeze.hpp"
#include "backends/loop_device.hpp"
#include "backends/mountinfo.hpp"
#include "core/errors.hpp"

namespace berth {

namespace {

/// True when `path` lies below one of `dirs` (never a dir itself, never "").
bool below_any(const std::string& path, const std::vector<std::string>& dirs) {
  for (const auto& dir : dirs) {
    if (dir.empty()) {
      continue;
    }
    const std::string prefix = dir.back() == '/' ? dir : dir + "/";
    if (path.size() > prefix.size() && path.compare(0, prefix.size(), prefix) == 0) {
      return true;
    }
  }
  return false;
}

/// Thaws each filesystem of `kept` (loop devices of berth's images that a record keeps)
/// that is mounted and frozen: a snapshot's copy freezes one, and a crash during the copy
/// leaves it frozen, its writers blocked, until someone thaws it. Returns how many were.
size_t thaw_kept_devices(std::set<std::string> kept) {
  if (kept.empty()) {
    return 0; // the mount table is long on a busy host: read it only when it can matter
  }
  auto mounts = read_mountinfo();
  if (!mounts) {
    return 0;
  }
  size_t thawed = 0;
  for (const auto& e : *mounts) {
    if (kept.erase(e.source) == 0) {
      continue; // not kept, or thawed already: one mount thaws the whole filesystem
    }
    auto was = thaw_filesystem(e.mount_point);
    if (!was) {
      spdlog::error("loop sweep: {} (on {}) may be frozen and cannot be thawed: {}; its "
                    "writers wait until `fsfreeze -u {}`",
                    e.mount_point, e.source, describe(was.error()), e.mount_point);
    } else if (*was) {
      spdlog::warn("loop sweep: thawed the filesystem at {} (on {}): a snapshot froze it "
                   "and berthd stopped before the copy ended", e.mount_point, e.source);
      ++thawed;
    }
  }
  return thawed;
}

/// Turns direct I/O on for each kept device of a volume that wants it and lacks it: one
/// attached by an older berthd, which did not ask for it. Returns how many now have it.
size_t upgrade_kept_devices(const state_snapshot& state, const block_backend& block,
                            const loop_list& kept) {
  std::map<std::string, const volume_record*> by_image;
  for (const auto& [name, rec] : state.volumes) {
    by_image[block.image_path(rec)] = &rec;
  }
  size_t upgraded = 0;
  for (const auto& [device, backing] : kept) {
    auto it = by_image.find(backing);
    auto on = loop_direct_io(device);
    if (it == by_image.end() || !on || *on || !block.attaches_with_direct_io(*it->second)) {
      continue;
    }
    const auto& rec = *it->second;
    auto size = loop_block_size(device);
    auto kept_size = size ? std::to_string(*size) : std::string{"unknown"};
    if (auto err = set_loop_direct_io(device, true)) {
      spdlog::warn("loop sweep: volume {} stays without direct I/O on {} (attached before "
                   "berth asked for it): {}; its pages are cached twice until it is "
                   "attached again",
                   rec.name, device, describe(err));
      continue;
    }
    spdlog::info("loop sweep: volume {}: direct I/O turned on for {}, attached before berth "
                 "asked for it; its logical block size stays {} until it is attached again",
                 rec.name, device, kept_size);
    ++upgraded;
  }
  return upgraded;
}

} // namespace

loop_list loops_to_sweep(const state_snapshot& state, const std::vector<std::string>& image_dirs,
                         const std::function<std::string(const volume_record&)>& image_of,
                         const loop_list& loops) {
  loop_list out;
  std::set<std::string> staged_devices;
  std::set<std::string> staged_images;
  for (const auto& [name, rec] : state.volumes) {
    // A CSI staging, or a Docker block volume's mount (its device is found by its image).
    if (rec.staging_path.empty() && !rec.mounted) {
      continue;
    }
    if (!rec.device.empty()) {
      staged_devices.insert(rec.device);
    }
    if (auto image = image_of(rec); !image.empty()) {
      staged_images.insert(image);
    }
  }
  for (const auto& [device, backing] : loops) {
    if (!below_any(backing, image_dirs)) {
      continue; // not one of berth's images
    }
    if (staged_devices.count(device) > 0 || staged_images.count(backing) > 0) {
      continue;
    }
    out.emplace_back(device, backing);
  }
  return out;
}

loop_sweep_report sweep_loop_devices(
  const state_snapshot& state, const std::map<std::string, std::shared_ptr<backend>>& backends) {
  loop_sweep_report report;
  const auto* block = block_backend_of(backends);
  if (block == nullptr) {
    return report;
  }
  auto image_of = [block](const volume_record& rec) { return block->image_path(rec); };
  const auto loops = list_loop_devices();
  const auto swept = loops_to_sweep(state, block->image_dirs(), image_of, loops);
  std::set<std::string> kept;
  loop_list kept_loops;
  for (const auto& [device, backing] : loops) {
    if (below_any(backing, block->image_dirs())) {
      kept.insert(device);
    }
  }
  for (const auto& [device, backing] : swept) {
    kept.erase(device);
  }
  for (const auto& loop : loops) {
    if (kept.count(loop.first) > 0) {
      kept_loops.push_back(loop);
    }
  }
  report.thawed = thaw_kept_devices(std::move(kept));
  report.direct_io_on = upgrade_kept_devices(state, *block, kept_loops);
  for (const auto& [device, backing] : swept) {
    if (auto err = detach_loop_device(device)) {
      spdlog::error("loop sweep: cannot detach {} (backing {}), which no volume uses: {}",
                    device, backing, describe(err));
      ++report.failed;
      continue;
    }
    spdlog::warn("loop sweep: detached {} (backing {}): no volume is staged or mounted on it "
                 "(left by a crash between an attach and its commit)",
                 device, backing);
    ++report.detached;
  }
  return report;
}

} // namespace berth
