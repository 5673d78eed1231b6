// Loop devices by ioctl: attach (LOOP_CONFIGURE, or step by step on an older kernel), find
// by the backing file's device and inode, list, detach, and their sysfs settings. One file
// because every part shares the device-node opening and the error wording below; the block
// size an image is attached with is in loop_block_size.cpp.

#include "backends/loop_device.hpp"

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <thread>

#include <fcntl.h>
#include <linux/fs.h>
#include <linux/loop.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <spdlog/spdlog.h>

#include "backends/loop_block_size.hpp"
#include "core/errors.hpp"
#include "core/unique_fd.hpp"

namespace fs = std::filesystem;

namespace berth {

namespace {

/// An error for a failed system call; `e` is its errno, saved before any other call.
caf::error sys_error(int e, const std::string& what) {
  return make_error(ec::backend_failure, what + ": " + std::strerror(e));
}

/// Opens a loop device node; retries briefly while devtmpfs has not made it yet.
int open_loop_node(const std::string& device, int flags) {
  for (int i = 0;; ++i) {
    int fd = ::open(device.c_str(), flags | O_CLOEXEC);
    if (fd >= 0 || errno != ENOENT || i >= 50) {
      return fd;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
}

/// Set once the kernel refused LOOP_CONFIGURE and a device was set up step by step.
std::atomic<bool> configure_refused{false};
/// Whether a device attached without the direct I/O asked for was logged at warn yet.
std::atomic<bool> direct_io_refusal_logged{false};

void count(loop_stats* stats, metrics::atomic_counter loop_stats::*which) {
  if (stats != nullptr) {
    (stats->*which).add();
  }
}

/// Runs `call` until it does not fail with EAGAIN (the kernel's answer while the device
/// is busy settling), at most 10 times 10 ms.
template <class Call>
int retry_eagain(Call call) {
  int rc = -1;
  for (int i = 0; i < 10; ++i) {
    rc = call();
    if (rc == 0 || errno != EAGAIN) {
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return rc;
}

loop_info64 info_for(const std::string& image, bool direct_io) {
  loop_info64 info{};
  std::strncpy(reinterpret_cast<char*>(info.lo_file_name), image.c_str(), LO_NAME_SIZE - 1);
  info.lo_flags = direct_io ? LO_FLAGS_DIRECT_IO : 0;
  return info;
}

/// A kernel before 5.8 sets a device up step by step: the file, its name, the block size,
/// then direct I/O. A step after the first that fails detaches the device again. Direct
/// I/O the kernel refuses (its filesystem cannot do it) is no failure: the device stays
/// buffered, as LOOP_CONFIGURE leaves it in that case.
caf::error set_up_step_by_step(int dev, int image_fd, const std::string& image,
                               const std::string& device, const loop_setup& setup,
                               uint32_t block_size, bool& busy) {
  if (::ioctl(dev, LOOP_SET_FD, image_fd) != 0) {
    int e = errno;
    busy = e == EBUSY; // another attach took this device between GET_FREE and SET_FD
    return sys_error(e, "cannot attach " + image + ": LOOP_SET_FD on " + device);
  }
  auto undo = [&](const char* step) {
    int e = errno;
    auto err = sys_error(e, "cannot attach " + image + ": " + step + " on " + device);
    ::ioctl(dev, LOOP_CLR_FD, 0);
    return err;
  };
  auto info = info_for(image, false);
  if (retry_eagain([&] { return ::ioctl(dev, LOOP_SET_STATUS64, &info); }) != 0) {
    return undo("LOOP_SET_STATUS64");
  }
  auto set_block_size = [&] {
    return ::ioctl(dev, LOOP_SET_BLOCK_SIZE, static_cast<unsigned long>(block_size));
  };
  if (block_size != 512 && retry_eagain(set_block_size) != 0) {
    return undo("LOOP_SET_BLOCK_SIZE");
  }
  if (setup.direct_io) {
    ::ioctl(dev, LOOP_SET_DIRECT_IO, 1UL);
  }
  return {};
}

/// One attempt on a free device. `busy` reports a lost race.
caf::expected<std::string> try_attach(int control, int image_fd, const std::string& image,
                                      const loop_setup& setup, uint32_t block_size, bool& busy) {
  busy = false;
  int n = ::ioctl(control, LOOP_CTL_GET_FREE);
  if (n < 0) {
    int e = errno;
    return sys_error(e, "cannot attach " + image + ": LOOP_CTL_GET_FREE on /dev/loop-control");
  }
  std::string device = "/dev/loop" + std::to_string(n);
  unique_fd dev(open_loop_node(device, O_RDWR));
  if (!dev) {
    int e = errno;
    return sys_error(e, "cannot attach " + image + ": open " + device);
  }
  int refused = 0; // the errno LOOP_CONFIGURE was refused with
  if (!configure_refused.load() && !setup.step_by_step) {
    loop_config cfg{};
    cfg.fd = static_cast<uint32_t>(image_fd);
    cfg.block_size = block_size;
    cfg.info = info_for(image, setup.direct_io);
    if (retry_eagain([&] { return ::ioctl(dev.get(), LOOP_CONFIGURE, &cfg); }) == 0) {
      count(setup.stats, &loop_stats::configured);
      return device;
    }
    int e = errno;
    if (e == EBUSY) {
      busy = true;
      return sys_error(e, "cannot attach " + image + ": LOOP_CONFIGURE on " + device);
    }
    // A kernel before 5.8 knows no LOOP_CONFIGURE (EINVAL, or ENOTTY): from then on
    // berth sets devices up step by step, and says so once.
    if (e != EINVAL && e != ENOTTY) {
      return sys_error(e, "cannot attach " + image + ": LOOP_CONFIGURE on " + device);
    }
    refused = e;
  }
  if (auto err =
        set_up_step_by_step(dev.get(), image_fd, image, device, setup, block_size, busy)) {
    return err;
  }
  if (refused != 0 && !configure_refused.exchange(true)) {
    spdlog::info("loop devices: the kernel refused LOOP_CONFIGURE ({}); attaching with "
                 "LOOP_SET_FD and setting the block size and direct I/O one by one",
                 std::strerror(refused));
  }
  count(setup.stats, &loop_stats::set_fd);
  return device;
}

/// Why `device` reads and writes `image` through the page cache although direct I/O was
/// asked for.
std::string why_no_direct_io(const std::string& image, const std::string& device,
                             uint32_t block_size) {
  int fd = ::open(image.c_str(), O_RDONLY | O_DIRECT | O_CLOEXEC | O_NOFOLLOW);
  if (fd < 0 && errno == EINVAL) {
    return "the filesystem of " + image + " cannot do O_DIRECT";
  }
  if (fd >= 0) {
    ::close(fd);
  }
  return "the kernel refused it; " + device + "'s block size " + std::to_string(block_size)
         + " may be below that of the disk under " + image;
}

std::string read_first_line(const std::string& path) {
  std::ifstream in(path);
  std::string line;
  std::getline(in, line);
  return line;
}

} // namespace

bool is_loop_device_path(const std::string& device) {
  const std::string prefix = "/dev/loop";
  if (device.size() <= prefix.size() || device.compare(0, prefix.size(), prefix) != 0
      || device.size() > prefix.size() + 7) {
    return false;
  }
  for (size_t i = prefix.size(); i < device.size(); ++i) {
    if (device[i] < '0' || device[i] > '9') {
      return false;
    }
  }
  return true;
}

caf::expected<std::string> attach_loop_device(const std::string& image, const loop_setup& setup) {
  unique_fd image_fd(::open(image.c_str(), O_RDWR | O_CLOEXEC | O_NOFOLLOW));
  if (!image_fd) {
    int e = errno;
    return make_error(e == ENOENT ? ec::not_found : ec::backend_failure,
                      "cannot attach " + image + ": open: " + std::strerror(e));
  }
  struct stat st {};
  if (::fstat(image_fd.get(), &st) != 0 || !S_ISREG(st.st_mode)) {
    return make_error(ec::backend_failure, "cannot attach " + image + ": not a regular file");
  }
  unique_fd control(::open("/dev/loop-control", O_RDWR | O_CLOEXEC));
  if (!control) {
    int e = errno;
    return sys_error(e, "cannot attach " + image + ": open /dev/loop-control");
  }
  auto block_size = setup.block_size != 0 ? setup.block_size : loop_block_size_for(image);
  caf::error last;
  for (int attempt = 0; attempt < 16; ++attempt) {
    bool busy = false;
    auto dev = try_attach(control.get(), image_fd.get(), image, setup, block_size, busy);
    auto dio = dev && setup.direct_io ? loop_direct_io(*dev) : caf::expected<bool>{true};
    if (!dio || !*dio) {
      count(setup.stats, &loop_stats::direct_io_unavailable);
      auto why = why_no_direct_io(image, *dev, block_size);
      // Once at warn: every image shares the reason, and a node stages many volumes.
      if (!direct_io_refusal_logged.exchange(true)) {
        spdlog::warn("{} reads and writes {} through the host's page cache, not with direct "
                     "I/O: {}; each page of such a volume is cached twice",
                     *dev, image, why);
      } else {
        spdlog::debug("{} reads and writes {} without direct I/O: {}", *dev, image, why);
      }
    }
    if (dev || !busy) {
      return dev;
    }
    last = std::move(dev.error());
    spdlog::debug("{}; retrying with another loop device", describe(last));
  }
  return last;
}

namespace {

/// Calls `seen(device, backing device, backing inode)` for each attached loop device, as
/// LOOP_GET_STATUS64 names its backing file; false when /sys/block cannot be read.
///
/// Not by path: /sys names the backing file by its path in the mount namespace that
/// attached it, and once that is gone (a berthd in a container that was replaced) by
/// another one. The file's device and inode identify it in every namespace, as losetup's
/// own check does; a removed and recreated image is a new inode and never matches.
template <class Seen>
bool scan_loop_devices(std::error_code& err, Seen seen) {
  fs::directory_iterator it("/sys/block", err);
  if (err) {
    return false;
  }
  for (const auto& entry : it) {
    const std::string name = entry.path().filename().string();
    if (name.compare(0, 4, "loop") != 0) {
      continue;
    }
    // Absent while the device is not attached.
    if (read_first_line(entry.path().string() + "/loop/backing_file").empty()) {
      continue;
    }
    const std::string device = "/dev/" + name;
    unique_fd dev(open_loop_node(device, O_RDONLY));
    if (!dev) {
      continue;
    }
    loop_info64 info{};
    if (::ioctl(dev.get(), LOOP_GET_STATUS64, &info) != 0) {
      continue; // ENXIO: detached meanwhile
    }
    if (!seen(device, info.lo_device, info.lo_inode)) {
      break;
    }
  }
  return true;
}

} // namespace

caf::expected<std::string> find_loop_device(const std::string& image) {
  std::error_code err;
  fs::path canonical = fs::canonical(image, err);
  if (err) {
    return std::string(); // no such file: nothing can be attached to it by this name
  }
  struct stat st {};
  if (::stat(canonical.c_str(), &st) != 0) {
    return std::string();
  }
  std::string found;
  if (!scan_loop_devices(err, [&](const std::string& device, uint64_t dev, uint64_t ino) {
        if (ino == st.st_ino && dev == static_cast<uint64_t>(st.st_dev)) {
          found = device;
          return false;
        }
        return true;
      })) {
    return make_error(ec::backend_failure, "cannot look for the loop device of " + image
                                             + ": /sys/block: " + err.message());
  }
  return found;
}

loop_index index_loop_devices() {
  loop_index out;
  std::error_code err;
  scan_loop_devices(err, [&](const std::string& device, uint64_t dev, uint64_t ino) {
    out.emplace(std::make_pair(dev, ino), device);
    return true;
  });
  return out;
}

std::string indexed_loop_device(const loop_index& index, const std::string& image) {
  struct stat st {};
  if (::stat(image.c_str(), &st) != 0) {
    return {};
  }
  auto it = index.find({static_cast<uint64_t>(st.st_dev), static_cast<uint64_t>(st.st_ino)});
  return it == index.end() ? std::string{} : it->second;
}

std::vector<std::pair<std::string, std::string>> list_loop_devices() {
  std::vector<std::pair<std::string, std::string>> out;
  std::error_code err;
  fs::directory_iterator it("/sys/block", err);
  if (err) {
    return out;
  }
  for (const auto& entry : it) {
    const std::string name = entry.path().filename().string();
    if (name.compare(0, 4, "loop") != 0) {
      continue;
    }
    std::string backing = read_first_line(entry.path().string() + "/loop/backing_file");
    if (!backing.empty()) {
      out.emplace_back("/dev/" + name, std::move(backing));
    }
  }
  return out;
}

caf::expected<std::string> find_or_attach_loop_device(const std::string& image, bool& attached,
                                                      const loop_setup& setup) {
  attached = false;
  auto found = find_loop_device(image);
  if (!found || !found->empty()) {
    return found;
  }
  auto dev = attach_loop_device(image, setup);
  attached = static_cast<bool>(dev);
  return dev;
}

caf::error detach_loop_device(const std::string& device) {
  if (!is_loop_device_path(device)) {
    return make_error(ec::invalid_argument, "not a loop device: \"" + device + "\"");
  }
  unique_fd dev(open_loop_node(device, O_RDONLY));
  if (!dev) {
    int e = errno;
    return e == ENOENT || e == ENXIO ? caf::error{} : sys_error(e, "cannot detach " + device);
  }
  for (int i = 0;; ++i) {
    if (::ioctl(dev.get(), LOOP_CLR_FD, 0) == 0 || errno == ENXIO) {
      return {};
    }
    // Older kernels refuse while another opener (udev's probe) holds the device.
    if (errno != EBUSY || i >= 50) {
      int e = errno;
      return sys_error(e, "cannot detach " + device + ": LOOP_CLR_FD");
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
}

caf::error refresh_loop_capacity(const std::string& device) {
  if (!is_loop_device_path(device)) {
    return make_error(ec::invalid_argument, "not a loop device: \"" + device + "\"");
  }
  unique_fd dev(open_loop_node(device, O_RDONLY));
  if (!dev) {
    int e = errno;
    return sys_error(e, "cannot resize " + device);
  }
  if (::ioctl(dev.get(), LOOP_SET_CAPACITY, 0) != 0) {
    int e = errno;
    return sys_error(e, "cannot resize " + device + ": LOOP_SET_CAPACITY");
  }
  return {};
}

// -- tuning: direct I/O and read-ahead ------------------------------------------

namespace {

/// /sys/block/loopN/REL for a "/dev/loopN" device; "" for anything else.
std::string loop_sysfs(const std::string& device, const std::string& rel) {
  if (!is_loop_device_path(device)) {
    return {};
  }
  return "/sys/block/" + device.substr(5) + "/" + rel;
}

caf::error not_a_loop_device(const std::string& device) {
  return make_error(ec::invalid_argument, "not a loop device: \"" + device + "\"");
}

} // namespace

caf::expected<uint64_t> read_sysfs_number(const std::string& path) {
  std::ifstream in(path);
  uint64_t n = 0;
  if (!(in >> n)) {
    return make_error(ec::backend_failure, "cannot read " + path);
  }
  return n;
}

caf::error set_loop_direct_io(const std::string& device, bool on) {
  if (!is_loop_device_path(device)) {
    return not_a_loop_device(device);
  }
  unique_fd dev(open_loop_node(device, O_RDONLY));
  if (!dev) {
    int e = errno;
    return sys_error(e, "cannot set direct I/O of " + device);
  }
  if (::ioctl(dev.get(), LOOP_SET_DIRECT_IO, on ? 1UL : 0UL) != 0) {
    int e = errno;
    if (e == EINVAL) {
      return make_error(ec::invalid_argument,
                        "LOOP_SET_DIRECT_IO on " + device + " refused (" + std::strerror(e)
                          + "): the backing file's filesystem cannot do O_DIRECT, or "
                          + device + "'s block size is below its backing device's");
    }
    return sys_error(e, "cannot set direct I/O of " + device + ": LOOP_SET_DIRECT_IO");
  }
  return {};
}

caf::expected<bool> loop_direct_io(const std::string& device) {
  auto path = loop_sysfs(device, "loop/dio");
  if (path.empty()) {
    return not_a_loop_device(device);
  }
  auto n = read_sysfs_number(path);
  if (!n) {
    return n.error();
  }
  return *n != 0;
}

caf::expected<uint64_t> loop_block_size(const std::string& device) {
  auto path = loop_sysfs(device, "queue/logical_block_size");
  if (path.empty()) {
    return not_a_loop_device(device);
  }
  return read_sysfs_number(path);
}

caf::expected<uint64_t> loop_read_ahead_kb(const std::string& device) {
  auto path = loop_sysfs(device, "queue/read_ahead_kb");
  if (path.empty()) {
    return not_a_loop_device(device);
  }
  return read_sysfs_number(path);
}

caf::error set_loop_read_ahead_kb(const std::string& device, uint64_t kb) {
  auto path = loop_sysfs(device, "queue/read_ahead_kb");
  if (path.empty()) {
    return not_a_loop_device(device);
  }
  unique_fd fd(::open(path.c_str(), O_WRONLY | O_CLOEXEC));
  if (!fd) {
    int e = errno;
    return sys_error(e, "cannot set the read-ahead of " + device + ": open " + path);
  }
  const std::string text = std::to_string(kb) + "\n";
  if (::write(fd.get(), text.data(), text.size()) != static_cast<ssize_t>(text.size())) {
    int e = errno;
    return sys_error(e, "cannot set the read-ahead of " + device + ": write " + path);
  }
  return {};
}

caf::expected<uint64_t> block_device_size(const std::string& device) {
  unique_fd dev(::open(device.c_str(), O_RDONLY | O_CLOEXEC));
  if (!dev) {
    int e = errno;
    return sys_error(e, "cannot read the size of " + device);
  }
  uint64_t size = 0;
  if (::ioctl(dev.get(), BLKGETSIZE64, &size) != 0) {
    int e = errno;
    return sys_error(e, "cannot read the size of " + device + ": BLKGETSIZE64");
  }
  return size;
}

} // namespace berth
