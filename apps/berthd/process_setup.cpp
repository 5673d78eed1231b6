#include "apps/berthd/process_setup.hpp"

#include <cerrno>
#include <csignal>
#include <cstdint>
#include <cstring>
#include <ctime>

#include <sys/resource.h>

#include <spdlog/spdlog.h>

#include "core/free_memory.hpp"

namespace berth {

int wait_for_signal() {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGTERM);
  sigaddset(&set, SIGINT);
  sigaddset(&set, SIGHUP);
  while (true) {
    const timespec timeout{static_cast<time_t>(free_memory_sweep_interval.count()), 0};
    const int sig = sigtimedwait(&set, nullptr, &timeout);
    if (sig < 0) {
      if (errno == EAGAIN) {
        release_free_memory();
      }
      continue;
    }
    if (sig != SIGHUP) {
      return sig;
    }
    spdlog::info("SIGHUP received and ignored (berthd reloads nothing; SIGTERM stops it)");
  }
}

void raise_open_file_limit() {
  struct rlimit lim {};
  if (::getrlimit(RLIMIT_NOFILE, &lim) != 0) {
    spdlog::warn("cannot read the open-file limit: {}", std::strerror(errno));
    return;
  }
  if (lim.rlim_cur == lim.rlim_max) {
    spdlog::info("open-file limit {}", static_cast<uint64_t>(lim.rlim_cur));
    return;
  }
  auto before = lim.rlim_cur;
  lim.rlim_cur = lim.rlim_max;
  if (::setrlimit(RLIMIT_NOFILE, &lim) != 0) {
    spdlog::warn("cannot raise the open-file limit from {} to {}: {}",
                 static_cast<uint64_t>(before), static_cast<uint64_t>(lim.rlim_max),
                 std::strerror(errno));
    return;
  }
  spdlog::info("raised the open-file limit from {} to {}", static_cast<uint64_t>(before),
               static_cast<uint64_t>(lim.rlim_max));
}

} // namespace berth
