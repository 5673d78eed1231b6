#pragma once

// One crash trial, on a fresh berthd and state directory (tests/csi/berthd_process):
//
//   A  start berthd, create the shared volumes, run the workload, SIGKILL at a
//      random moment
//   B  start berthd with BERTH_TEST_CRASH_AT=STEP#N (a named step) or without
//      (random kills only); run the workload on the volumes A left certain; it dies
//      at the step, or is SIGKILLed at a random moment (a step not reached by then
//      is said so)
//   C  start berthd, wait until every volume is reconciled and none uncertain,
//      check (checker.hpp), stop it gracefully
//
// Everything random comes from the trial's seed, so a failing trial is run again
// with the same seed and plan (the kill's moment against the requests still
// varies with the machine's timing).

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

namespace berth::crash_trials {

/// A named step to crash at in B, at its Nth time; no step: SIGKILLs only.
struct trial_plan {
  std::string step;
  unsigned nth = 1;

  /// "STEP#N", or "random".
  std::string describe() const;
};

struct trial_options {
  std::chrono::milliseconds longest_window{2000}; ///< a random kill comes within this
  std::chrono::milliseconds step_window{4000};    ///< B waits this long for its step
};

struct trial_report {
  std::vector<std::string> problems; ///< a failed check, berthd failing to start, ...
  std::vector<std::string> lines;    ///< what happened, cycle by cycle
  bool step_reached = false;         ///< berthd died at the plan's step
  bool while_starting = false;       ///< ... before it served (a step of its start)
};

trial_report run_trial(const trial_options& opts, uint64_t seed, const trial_plan& plan);

} // namespace berth::crash_trials
