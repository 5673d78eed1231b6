#pragma once

// The named crash steps, read from the sources at test time, so a step added
// anywhere (a new compaction step, say) is tried without a change here.

#include <string>
#include <vector>

namespace berth::crash_trials {

/// Every NAME of a `test_crash_point("NAME")` call in the C++ sources under `root`
/// (tests/ and build directories left out), sorted, each once.
std::vector<std::string> crash_steps_in(const std::string& root);

} // namespace berth::crash_trials
