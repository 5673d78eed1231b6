#pragma once

// Loop devices by ioctl (linux/loop.h): no losetup(8), no fork.

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include <caf/error.hpp>
#include <caf/expected.hpp>

#include "backends/loop_block_size.hpp"
#include "core/telemetry/loop_stats.hpp"

namespace berth {

/// How attach_loop_device() sets a device up.
struct loop_setup {
  /// Read and write the image with O_DIRECT where its filesystem can: the data is then
  /// cached once, by the filesystem on the device, not a second time for the image file.
  /// The kernel turns it off where it cannot be had (see loop_direct_io()).
  bool direct_io = true;
  /// The device's logical block size; 0: loop_block_size_for(image).
  uint32_t block_size = 0;
  /// Where each attach is counted (how, and whether direct I/O was had); may be null.
  loop_stats* stats = nullptr;
  /// Sets the device up step by step, as on a kernel without LOOP_CONFIGURE, whatever
  /// this one has: for the tests of that path.
  bool step_by_step = false;
};

/// Attaches `image` (a regular file) to a free loop device as `setup` says and returns
/// its path, e.g. "/dev/loop3": LOOP_CONFIGURE (the file, the block size, direct I/O and
/// lo_file_name in one call); on a kernel without it, LOOP_SET_FD and then each setting,
/// said once in the log. Direct I/O asked for and not had is said once in the log, with
/// the reason, and counted. Takes a free number from /dev/loop-control and retries when
/// another process grabs the same device first (EBUSY). Does not look for an existing
/// attachment: see find_loop_device().
caf::expected<std::string> attach_loop_device(const std::string& image,
                                              const loop_setup& setup = {});

/// The loop device `image` is attached to, or "" when there is none: the attached
/// device whose backing file (LOOP_GET_STATUS64) has the image's device and inode.
/// Not by path: /sys shows a path of the mount namespace that attached the device.
caf::expected<std::string> find_loop_device(const std::string& image);

/// Every attached loop device by the device and inode of its backing file
/// (LOOP_GET_STATUS64): one scan, for a caller that looks up many images at once.
using loop_index = std::map<std::pair<uint64_t, uint64_t>, std::string>;
loop_index index_loop_devices();

/// The device in `index` backing `image` ("" when none, or the image cannot be read).
std::string indexed_loop_device(const loop_index& index, const std::string& image);

/// Every attached loop device with its backing file as /sys shows it
/// (" (deleted)" appended when unlinked), e.g.
/// {"/dev/loop3", "/var/lib/berth/block/volumes/v1.img"}.
/// For reconciliation and tests.
std::vector<std::pair<std::string, std::string>> list_loop_devices();

/// find_loop_device(), else attach_loop_device(). Sets `attached` when it attached.
caf::expected<std::string> find_or_attach_loop_device(const std::string& image, bool& attached,
                                                      const loop_setup& setup = {});

/// LOOP_CLR_FD. A device that is not attached (ENXIO) is success. While the
/// device is still open elsewhere (mounted), the kernel detaches it at last close.
caf::error detach_loop_device(const std::string& device);

/// LOOP_SET_CAPACITY: the device takes the backing file's current size.
caf::error refresh_loop_capacity(const std::string& device);

/// LOOP_SET_DIRECT_IO: the device reads and writes its backing file with O_DIRECT
/// (`on`) or through the page cache. The kernel refuses (EINVAL) when the backing
/// file's filesystem cannot do O_DIRECT or the device's block size is below what the
/// backing device needs: ec::invalid_argument, naming the device and the reason.
caf::error set_loop_direct_io(const std::string& device, bool on);

/// Whether the device uses direct I/O now (/sys/block/loopN/loop/dio).
caf::expected<bool> loop_direct_io(const std::string& device);

/// The device's logical block size (/sys/block/loopN/queue/logical_block_size).
caf::expected<uint64_t> loop_block_size(const std::string& device);

/// The device's read-ahead in KiB (/sys/block/loopN/queue/read_ahead_kb).
caf::expected<uint64_t> loop_read_ahead_kb(const std::string& device);

/// Sets the device's read-ahead (the kernel keeps whole pages: a multiple of the
/// page size reads back as written).
caf::error set_loop_read_ahead_kb(const std::string& device, uint64_t kb);

/// Size in bytes of a block device (BLKGETSIZE64).
caf::expected<uint64_t> block_device_size(const std::string& device);

/// The one decimal number a sysfs attribute holds (a loop device's, ext4's errors_count).
caf::expected<uint64_t> read_sysfs_number(const std::string& path);

/// True for "/dev/loopN" (N decimal): the only device paths these functions open.
bool is_loop_device_path(const std::string& device);

} // namespace berth
