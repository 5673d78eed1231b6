#pragma once

#include <string>

namespace berth {

/// The version and revision berthd was built from (berth_build_info, berthctl status).
struct build_info {
  std::string version;  ///< the project version (BERTH_VERSION)
  std::string revision; ///< `git rev-parse --short HEAD` at configure time, or "unknown"
};

/// This binary's build.
build_info this_build();

} // namespace berth
