#pragma once

// Loop devices by ioctl (linux/loop.h): no losetup(8), no fork.

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include <caf/error.hpp>
#include <caf/expected.hpp>

namespace berth {

/// Attaches `image` (a regular file) to a free loop device and returns its path,
/// e.g. "/dev/loop3". Takes a free number from /dev/loop-control and retries
/// when another process grabs the same device first (LOOP_SET_FD: EBUSY).
/// lo_file_name is set to the image path. Does not look for an existing
/// attachment: see find_loop_device().
caf::expected<std::string> attach_loop_device(const std::string& image);

/// The loop device `image` is attached to, or "" when there is none: the attached
/// device whose backing file (LOOP_GET_STATUS64) has the image's device and inode.
/// Not by path: /sys shows a path of the mount namespace that attached the device.
caf::expected<std::string> find_loop_device(const std::string& image);

/// Every attached loop device with its backing file as /sys shows it
/// (" (deleted)" appended when unlinked), e.g.
/// {"/dev/loop3", "/var/lib/berth/block/volumes/v1.img"}.
/// For reconciliation and tests.
std::vector<std::pair<std::string, std::string>> list_loop_devices();

/// find_loop_device(), else attach_loop_device(). Sets `attached` when it attached.
caf::expected<std::string> find_or_attach_loop_device(const std::string& image, bool& attached);

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

/// The device's read-ahead in KiB (/sys/block/loopN/queue/read_ahead_kb).
caf::expected<uint64_t> loop_read_ahead_kb(const std::string& device);

/// Sets the device's read-ahead (the kernel keeps whole pages: a multiple of the
/// page size reads back as written).
caf::error set_loop_read_ahead_kb(const std::string& device, uint64_t kb);

/// Size in bytes of a block device (BLKGETSIZE64).
caf::expected<uint64_t> block_device_size(const std::string& device);

/// True for "/dev/loopN" (N decimal): the only device paths these functions open.
bool is_loop_device_path(const std::string& device);

} // namespace berth
