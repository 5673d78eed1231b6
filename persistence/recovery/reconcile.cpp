#include "persistence/recovery/reconcile.hpp"

#include <spdlog/spdlog.h>

#include "backends/node_path.hpp"
#include "core/errors.hpp"
#include "core/names.hpp"
#include "core/staging.hpp"

namespace berth {

namespace {

void clear_mounts(volume_record& rec) {
  rec.mounts.clear();
  rec.origins.clear();
  rec.mounted = false;
  rec.mountpoint.clear();
}

/// Spells the record's node paths as the kernel shows them (realpath of the
/// parent): mountinfo shows them so, and the CSI adapter now canonicalizes every
/// path it receives. A record written before that may hold a path with a
/// symlinked parent (/var/lib/kubelet -> /data/kubelet); compared as a string it
/// would never match, and the volume would be staged twice.
/// Runs once at load, before needs_host_work compares the paths with mountinfo.
void canonicalize_node_paths(volume_record& rec) {
  if (!rec.staging_path.empty()) {
    rec.staging_path = canonical_node_path(rec.staging_path);
  }
  publication_map published;
  for (auto& [target, how] : rec.published) {
    published.emplace(canonical_node_path(target), how);
  }
  rec.published = std::move(published);
}

void clear_csi(volume_record& rec) {
  set_unstaged(rec);
  rec.published.clear();
}

/// CSI staging and publications (same boot; a new boot cleared them): a vanished
/// staging mount or loop device is staged again and a vanished publication is
/// published again, so a running pod keeps its volume; what cannot be remade is
/// cleared from the record, so the next NodeStage/NodePublish really runs instead
/// of answering "done".
void reconcile_csi(volume_record& rec, backend& storage, const std::set<std::string>& mount_points,
                   reconcile_report& report) {
  if (!in_csi_use(rec)) {
    return;
  }
  if (rec.staging_path.empty()) {
    // Published without a staging record cannot be served; the record is stale.
    spdlog::error("reconcile: volume {}: published but not staged; clearing", rec.name);
    clear_csi(rec);
    ++report.failed;
    ++report.restage_failed;
    return;
  }
  bool staged_on_host = !rec.staged_block && mount_points.count(rec.staging_path) > 0;
  if (!staged_on_host) {
    auto device = storage.stage(rec, staged_as(rec));
    if (!device) {
      spdlog::error("reconcile: volume {}: cannot stage again at {}: {}; clearing its staging",
                    rec.name, rec.staging_path, describe(device.error()));
      clear_csi(rec);
      ++report.failed;
      ++report.restage_failed;
      return;
    }
    if (*device != rec.device) {
      spdlog::warn("reconcile: volume {}: staged again at {} on {}", rec.name, rec.staging_path,
                   *device);
      ++report.remounted;
      ++report.restaged;
    }
    rec.device = *device;
  }
  for (auto it = rec.published.begin(); it != rec.published.end();) {
    if (mount_points.count(it->first) > 0) {
      ++it;
      continue;
    }
    auto made = storage.publish(rec, it->first, it->second);
    if (!made) {
      spdlog::error("reconcile: volume {}: cannot publish again at {}: {}", rec.name, it->first,
                    describe(made.error()));
      it = rec.published.erase(it);
      ++report.failed;
      ++report.republish_failed;
      continue;
    }
    it->second.created = it->second.created || *made;
    spdlog::warn("reconcile: volume {}: publication at {} had vanished, published again",
                 rec.name, it->first);
    ++report.remounted;
    ++report.republished;
    ++it;
  }
}

} // namespace

/// Unmounts mounts under volumes_root/NAME/mnt whose NAME has no record.
size_t unmount_strays(const state_snapshot& state, const std::set<std::string>& mount_points,
                      const std::string& volumes_root, backend& local) {
  size_t unmounted = 0;
  auto prefix = volumes_root + "/";
  for (const auto& mp : mount_points) {
    if (mp.compare(0, prefix.size(), prefix) != 0) {
      continue;
    }
    auto rest = mp.substr(prefix.size());
    auto slash = rest.find('/');
    if (slash == std::string::npos || rest.substr(slash) != "/mnt") {
      continue;
    }
    auto name = rest.substr(0, slash);
    if (!is_valid_volume_name(name) || state.volumes.count(name) > 0) {
      continue;
    }
    volume_record ghost;
    ghost.name = name;
    ghost.mountpoint = mp;
    if (auto err = local.unmount(ghost, true)) {
      spdlog::error("reconcile: cannot unmount {} of unknown volume {}: {}", mp, name,
                    describe(err));
    } else {
      spdlog::warn("reconcile: unmounted {}: no volume {} in the state", mp, name);
      ++unmounted;
    }
  }
  return unmounted;
}

reconcile_report reconcile_boot(state_snapshot& state, const std::string& boot_id) {
  reconcile_report report;
  report.new_boot = !state.imported && !state.boot_id.empty() && !boot_id.empty()
                    && state.boot_id != boot_id;
  if (report.new_boot) {
    for (auto& [name, rec] : state.volumes) {
      bool held = !rec.mounts.empty() || rec.mounted || in_csi_use(rec);
      if (held) {
        ++report.cleared;
      }
      clear_csi(rec);
      clear_mounts(rec);
    }
  }
  for (auto& [name, rec] : state.volumes) {
    if (in_csi_use(rec)) {
      canonicalize_node_paths(rec);
    }
  }
  state.boot_id = boot_id;
  state.imported = false;
  return report;
}

bool needs_host_work(const volume_record& rec, const backend& storage,
                     const std::set<std::string>& mount_points) {
  // Mirrors the branches of reconcile_volume that call the backend.
  if (in_csi_use(rec) && !rec.staging_path.empty()) {
    if (rec.staged_block || mount_points.count(rec.staging_path) == 0) {
      return true;
    }
    for (const auto& [target, how] : rec.published) {
      if (mount_points.count(target) == 0) {
        return true;
      }
    }
  }
  bool on_host = mount_points.count(storage.mountpoint(rec)) > 0;
  return total_mounts(rec) == 0 ? on_host : !on_host;
}

volume_record reconcile_volume(volume_record rec, backend& storage,
                               const std::set<std::string>& mount_points,
                               reconcile_report& report) {
  reconcile_csi(rec, storage, mount_points, report);
  auto mp = storage.mountpoint(rec);
  bool on_host = mount_points.count(mp) > 0;
  if (total_mounts(rec) == 0) {
    if (on_host) {
      // Mounted but held by nobody: a crash between mount(2) and its commit.
      if (auto err = storage.unmount(rec, true)) {
        spdlog::error("reconcile: volume {}: cannot unmount {}: {}", rec.name, mp,
                      describe(err));
        ++report.unmount_failed;
        return rec;
      }
      spdlog::warn("reconcile: volume {}: unmounted {} that no mount ID holds", rec.name, mp);
      ++report.unmounted;
    }
    clear_mounts(rec);
    return rec;
  }
  if (on_host) {
    rec.mounted = true;
    rec.mountpoint = mp;
    return rec;
  }
  // Same boot, counted, but the host mount is gone: containers still expect it.
  auto remade = storage.mount(rec);
  if (!remade) {
    spdlog::error("reconcile: volume {}: cannot mount again at {}: {}", rec.name, mp,
                  describe(remade.error()));
    rec.mounted = false;
    rec.mountpoint.clear();
    ++report.failed;
    return rec;
  }
  spdlog::warn("reconcile: volume {}: host mount had vanished, mounted again at {}", rec.name,
               *remade);
  rec.mounted = true;
  rec.mountpoint = *remade;
  ++report.remounted;
  return rec;
}

bool reconciled_already(const volume_record& rec, backend& storage,
                        const std::set<std::string>& mount_points) {
  // Without CSI use and host work, reconcile_volume takes only branches that neither call
  // the backend nor log (reconcile_csi returns at once); what is left is whether the
  // record would change.
  if (in_csi_use(rec) || needs_host_work(rec, storage, mount_points)) {
    return false;
  }
  reconcile_report unused;
  return reconcile_volume(rec, storage, mount_points, unused) == rec;
}

void count_reconcile_actions(const reconcile_report& report, counter_table& actions) {
  auto add = [&actions](const char* action, size_t n) {
    if (n > 0) {
      actions.add(action, n);
    }
  };
  add("remounted", report.remounted - report.restaged - report.republished);
  add("restaged", report.restaged);
  add("republished", report.republished);
  add("unmounted", report.unmounted);
  add("reconcile_failed", report.unmount_failed);
  add("mount_failed", report.failed - report.restage_failed - report.republish_failed);
  add("restage_failed", report.restage_failed);
  add("republish_failed", report.republish_failed);
}

} // namespace berth
