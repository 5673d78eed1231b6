// block_backend::observe: what the health sampler sees is wrong with a block volume, from
// outside its record. Every condition names what was seen and what to do
// (docs/running.md, "Volume health").

#include <algorithm>
#include <cerrno>
#include <cstring>

#include <dirent.h>
#include <sys/stat.h>
#include <unistd.h>

#include "backends/block_backend.hpp"
#include "backends/detail/block_helpers.hpp"

namespace berth {

namespace {

/// The errno of reading the first entry of the directory at `path` and of fdatasync(2) of
/// it, 0 when both work: a filesystem that has shut down (xfs_io -x -c shutdown, or a fatal
/// error) answers EIO while its mount still stands, xfs to both, ext4 to the fdatasync. On
/// a clean directory the fdatasync writes nothing; after a change to it in the running
/// journal transaction it commits that transaction, once a sample.
int shut_down_errno(const std::string& path) {
  DIR* dir = ::opendir(path.c_str());
  if (dir == nullptr) {
    return errno;
  }
  errno = 0;
  int e = ::readdir(dir) == nullptr ? errno : 0;
  if (e == 0 && ::fdatasync(::dirfd(dir)) != 0) {
    e = errno;
  }
  ::closedir(dir);
  return e;
}

/// The conditions of the filesystem mounted at `point` from `m`.
void observe_filesystem(const std::string& point, const mount_entry& m, bool ro_expected,
                        volume_conditions& out) {
  if (int e = shut_down_errno(point); e != 0) {
    out.push_back({abnormal_reason::filesystem_shut_down,
                   "the filesystem at " + point + " answers \"" + std::strerror(e)
                     + "\" at its root: it has shut down after an error; stop the workload so "
                       "the volume is unmounted, and check its image (xfs_repair, e2fsck -f) "
                       "before using it again"});
  }
  if (m.fstype == "ext4") {
    auto count = "/sys/fs/ext4/" + m.source.substr(m.source.rfind('/') + 1) + "/errors_count";
    if (auto n = read_sysfs_number(count); n && *n > 0) {
      out.push_back({abnormal_reason::filesystem_errors,
                     "the ext4 filesystem at " + point + " has recorded errors ("
                       + std::to_string(*n) + " in " + count
                       + "; the kernel log names them): stop the workload so the volume is "
                         "unmounted, and run e2fsck -f on its image"});
    }
  }
  if (!ro_expected && is_read_only(m.super_options)) {
    out.push_back({abnormal_reason::filesystem_read_only,
                   "the filesystem at " + point + " went read-only (errors=remount-ro after an "
                     + "error, or a remount by hand): writes fail; stop the workload so the "
                       "volume is unmounted, and check its image"});
  }
}

/// The conditions of the mount berth made at `point` for the volume on `device` ("" when
/// no loop device holds its image); `kind` names the mount in messages.
void observe_mount(const std::string& point, const std::string& kind, const std::string& device,
                   const block_backend::host_view& host, volume_conditions& out) {
  auto it = host.mounts.find(point);
  if (it == host.mounts.end()) {
    out.push_back({abnormal_reason::mount_gone,
                   "the " + kind + " " + point + " is not mounted any more: stop the workload "
                     + "and mount the volume again (unstage and stage, or unmount and mount)"});
    return;
  }
  if (!device.empty() && it->second.source != device) {
    out.push_back({abnormal_reason::mount_foreign,
                   "the " + kind + " " + point + " holds " + it->second.source + ", not " + device
                     + " (the volume's loop device): something mounted over it; "
                     + "unmount that, or stage the volume again"});
  }
}

} // namespace

volume_conditions block_backend::observe(const volume_record& rec, const host_view& host) const {
  volume_conditions out;
  auto image = checked_image(rec);
  if (!image || rec.kind != record_kind::volume) {
    return out;
  }
  const std::string what = block_what(rec);
  const bool in_use = rec.mounted || !rec.staging_path.empty();
  struct stat st {};
  std::string device;
  if (::stat(image->c_str(), &st) != 0) {
    int e = errno;
    out.push_back({abnormal_reason::image_missing,
                   "the image " + *image + " of " + what + " cannot be read (" + std::strerror(e)
                     + "): its data is gone unless the file is put back; restore the volume "
                       "from a snapshot or an export, or remove it"});
  } else {
    if (static_cast<uint64_t>(st.st_size) < rec.capacity_bytes) {
      out.push_back({abnormal_reason::image_short,
                     "the image " + *image + " is " + std::to_string(st.st_size)
                       + " bytes, shorter than the volume's " + std::to_string(rec.capacity_bytes)
                       + ": something truncated it; restore the volume from a snapshot or an "
                         "export"});
    }
    device = indexed_loop_device(host.loops, *image);
    if (in_use && device.empty()) {
      bool other = false;
      for (const auto& [key, dev] : host.loops) {
        other = other || dev == rec.device;
      }
      if (other && !rec.device.empty()) {
        out.push_back({abnormal_reason::image_replaced,
                       "the loop device " + rec.device + " holds a file that is not the image "
                         + *image + " any more (it was replaced): stop the workload, unstage "
                         + "and stage the volume again"});
      } else {
        out.push_back({abnormal_reason::device_detached,
                       "no loop device holds the image " + *image + " although " + what
                         + " is in use: its device was detached; stop the workload and mount "
                           "the volume again"});
      }
    }
  }
  std::string fs_point;
  if (rec.mounted && !rec.mountpoint.empty()) {
    fs_point = rec.mountpoint; // a Docker volume
    observe_mount(rec.mountpoint, "mount", device, host, out);
  } else if (!rec.staging_path.empty() && !rec.staged_block) {
    fs_point = rec.staging_path;
    observe_mount(rec.staging_path, "staging path", device, host, out);
  }
  for (const auto& [target, pub] : rec.published) {
    if (host.mounts.count(target) == 0) {
      out.push_back({abnormal_reason::mount_gone,
                     "the publication " + target + " is not mounted any more: the pod using it "
                       + "sees an empty directory; restart the pod"});
    }
  }
  auto fs = fs_point.empty() ? host.mounts.end() : host.mounts.find(fs_point);
  if (fs != host.mounts.end() && (device.empty() || fs->second.source == device)) {
    bool ro_expected =
      std::find(rec.stage_flags.begin(), rec.stage_flags.end(), "ro") != rec.stage_flags.end();
    observe_filesystem(fs_point, fs->second, ro_expected, out);
  }
  return out;
}

} // namespace berth
