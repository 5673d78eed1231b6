// Only this file carries BERTH_REVISION (it changes with every commit), so a new
// revision recompiles one file, not the tree.

#include "core/build_info.hpp"

#ifndef BERTH_REVISION
#define BERTH_REVISION "unknown"
#endif

namespace berth {

build_info this_build() {
  return {BERTH_VERSION, BERTH_REVISION};
}

} // namespace berth
