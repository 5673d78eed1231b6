#pragma once

// Test-only crash points: the steps of start-up, compaction, the engine and a block image's
// copy can be killed one by one,
// and held (test_hold_point) so a test sees berthd between two steps.

namespace berth {

/// TEST ONLY. When $BERTH_TEST_CRASH_AT names `step` ("step", or "step#N" for the Nth time
/// this process reaches it), logs that and ends the process with _exit(137), leaving the
/// files as a kill -9 at that point would. Does nothing when the variable is unset.
void test_crash_point(const char* step);

/// TEST ONLY. When $BERTH_TEST_HOLD_AT is "STEP:FILE" and STEP is `step`, logs that and
/// waits, polling, while FILE exists: the test removes FILE to let the process go on.
/// Does nothing when the variable is unset or names another step.
void test_hold_point(const char* step);

} // namespace berth
