#include "backends/detail/fs_freeze.hpp"

#include <cerrno>
#include <cstring>
#include <utility>

#include <fcntl.h>
#include <linux/fs.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <spdlog/spdlog.h>

#include "core/errors.hpp"

namespace berth {

namespace {

int open_dir(const std::string& path) {
  return ::open(path.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
}

} // namespace

filesystem_freeze::filesystem_freeze(filesystem_freeze&& other) noexcept
  : path_(std::move(other.path_)), what_(std::move(other.what_)),
    fd_(std::exchange(other.fd_, -1)) {
  other.path_.clear();
}

filesystem_freeze& filesystem_freeze::operator=(filesystem_freeze&& other) noexcept {
  if (this != &other) {
    thaw();
    path_ = std::move(other.path_);
    what_ = std::move(other.what_);
    fd_ = std::exchange(other.fd_, -1);
    other.path_.clear();
  }
  return *this;
}

filesystem_freeze::~filesystem_freeze() {
  thaw();
}

caf::expected<filesystem_freeze> filesystem_freeze::freeze(const std::string& path,
                                                           const std::string& what) {
  int fd = open_dir(path);
  if (fd < 0) {
    int e = errno;
    return make_error(ec::backend_failure,
                      what + ": cannot open " + path + " to freeze it: " + std::strerror(e));
  }
  if (::ioctl(fd, FIFREEZE, 0) != 0) {
    int e = errno;
    ::close(fd);
    return make_error(ec::backend_failure,
                      what + ": cannot freeze the filesystem at " + path + " for a consistent "
                        + "copy: " + std::strerror(e)
                        + (e == EBUSY ? " (it is frozen already: thaw it with fsfreeze -u)" : ""));
  }
  filesystem_freeze out;
  out.path_ = path;
  out.what_ = what;
  out.fd_ = fd;
  spdlog::info("{}: froze the filesystem at {} for the copy", what, path);
  return out;
}

void filesystem_freeze::thaw() {
  if (fd_ < 0) {
    return;
  }
  if (::ioctl(fd_, FITHAW, 0) != 0) {
    spdlog::error("{}: cannot thaw the filesystem at {}: {}; its writers wait until "
                  "`fsfreeze -u {}`", what_, path_, std::strerror(errno), path_);
  } else {
    spdlog::info("{}: thawed the filesystem at {}", what_, path_);
  }
  ::close(fd_);
  fd_ = -1;
  path_.clear();
}

caf::expected<bool> thaw_filesystem(const std::string& path) {
  int fd = open_dir(path);
  if (fd < 0) {
    int e = errno;
    return make_error(ec::backend_failure, "cannot open " + path + " to thaw it: "
                                             + std::strerror(e));
  }
  int rc = ::ioctl(fd, FITHAW, 0);
  int e = errno;
  ::close(fd);
  if (rc == 0) {
    return true;
  }
  if (e == EINVAL) {
    return false; // not frozen
  }
  return make_error(ec::backend_failure, "cannot thaw the filesystem at " + path + ": "
                                           + std::strerror(e));
}

} // namespace berth
