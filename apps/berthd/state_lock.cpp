#include "apps/berthd/state_lock.hpp"

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include "core/errors.hpp"

namespace berth {

state_lock::~state_lock() {
  if (fd_ >= 0) {
    ::close(fd_);
  }
}

caf::error state_lock::acquire(const std::string& state_dir) {
  auto path = state_dir + "/berthd.lock";
  fd_ = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
  if (fd_ < 0) {
    return make_error(ec::unavailable, "cannot open " + path + ": " + std::strerror(errno));
  }
  if (::flock(fd_, LOCK_EX | LOCK_NB) != 0) {
    auto err = errno;
    if (err == EWOULDBLOCK) {
      return make_error(ec::unavailable, "another berthd is using " + state_dir + " (" + path
                                           + " is locked)");
    }
    return make_error(ec::unavailable, "cannot lock " + path + ": " + std::strerror(err));
  }
  return {};
}

} // namespace berth
