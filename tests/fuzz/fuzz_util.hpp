#pragma once

// What the fuzz targets share: a failed oracle aborts with a message, so libFuzzer
// keeps the input that broke it as a crash artifact.

#include <cstdio>
#include <cstdlib>
#include <string>

#include <sys/mman.h>
#include <unistd.h>

namespace berth::fuzz {

/// Aborts, naming the oracle that did not hold and the detail.
[[noreturn]] inline void oracle_failed(const char* oracle, const std::string& detail) {
  std::fprintf(stderr, "fuzz oracle failed: %s: %s\n", oracle, detail.c_str());
  std::abort();
}

/// Checks `cond`; aborts naming `oracle` when it does not hold.
inline void check(bool cond, const char* oracle, const std::string& detail = "") {
  if (!cond) {
    oracle_failed(oracle, detail);
  }
}

/// A path whose file holds `data`, for readers that take a path: an anonymous memory
/// file, rewritten for each input and gone when the process ends (nothing to clean up).
inline std::string scratch_file(const void* data, size_t size) {
  static const int fd = ::memfd_create("berth-fuzz", MFD_CLOEXEC);
  check(fd >= 0, "memfd_create works");
  check(::ftruncate(fd, 0) == 0, "the scratch file truncates");
  auto* p = static_cast<const char*>(data);
  for (size_t done = 0; done < size;) {
    auto n = ::pwrite(fd, p + done, size - done, static_cast<off_t>(done));
    check(n > 0, "the scratch file takes the input");
    done += static_cast<size_t>(n);
  }
  return "/proc/self/fd/" + std::to_string(fd);
}

} // namespace berth::fuzz
