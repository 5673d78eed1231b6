#pragma once

// What the fuzz targets share: a failed oracle aborts with a message, so libFuzzer
// keeps the input that broke it as a crash artifact.

#include <cstdio>
#include <cstdlib>
#include <string>

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

} // namespace berth::fuzz
