#pragma once

// Test-only crash points: the steps of start-up and compaction can be killed one by one.

namespace berth {

/// TEST ONLY. When $BERTH_TEST_CRASH_AT names `step` ("step", or "step#N" for the Nth time
/// this process reaches it), logs that and ends the process with _exit(137), leaving the
/// files as a kill -9 at that point would. Does nothing when the variable is unset.
void test_crash_point(const char* step);

} // namespace berth
