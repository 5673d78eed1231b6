// berth-crash-trials: randomized crash trials of berthd (docs/testing.md, "Crash
// trials"). Each trial (trial.hpp) runs a mixed Docker and CSI workload, kills
// berthd at a random moment or at a named crash step, restarts it and holds every
// volume, mount and loop device against what was acknowledged.
//
//   berth-crash-trials --sources DIR [--trials N] [--seed S] [--plan STEP#N|random]
//
// The first trials crash at each named step of the sources once (at its first
// time), then random kills as many; later rounds crash at a step's Nth time, N
// random (1 for a step the first round saw crash berthd while it started). Exit 0: every trial passed; 1: one failed (its seed and plan printed);
// 77: skipped (not root, no loop devices), 1 then under BERTH_REQUIRE_ALL=1 or
// CI=true.

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <random>
#include <set>
#include <string>

#include <CLI/CLI.hpp>

#include "tests/csi/berthd_process.hpp"
#include "tests/e2e/crash_trials/crash_steps.hpp"
#include "tests/e2e/crash_trials/trial.hpp"

namespace {

using namespace berth::crash_trials;

bool required() {
  const char* all = std::getenv("BERTH_REQUIRE_ALL");
  const char* ci = std::getenv("CI");
  return (all != nullptr && std::string(all) == "1") || (ci != nullptr && std::string(ci) == "true");
}

/// As tests/e2e/lib.sh's skip: loud, and a failure when every test must run.
int skip(const std::string& why) {
  bool must = required();
  std::printf("\n############################################################################\n");
  if (must) {
    std::printf("## FAILED (required, not skipped): crash trials: %s\n", why.c_str());
    std::printf("## --require-all or CI=true: this end-to-end test must run here.\n");
  } else {
    std::printf("## SKIPPED: crash trials: %s\n", why.c_str());
    std::printf("## This end-to-end test did NOT run; nothing it covers was verified.\n");
  }
  std::printf("############################################################################\n\n");
  return must ? 1 : 77;
}

/// Trial i's plan: each round is every step once, then as many random trials. The
/// first round crashes at each step's first time; later ones at a random time, but
/// for a step seen to crash berthd while it started (it is reached once a start).
trial_plan plan_of(size_t i, const std::vector<std::string>& steps,
                   const std::set<std::string>& once_a_start, std::mt19937_64& rng) {
  auto round = steps.size() * 2;
  auto k = i % round;
  if (k >= steps.size()) {
    return {};
  }
  trial_plan p;
  p.step = steps[k];
  if (i >= round && once_a_start.count(p.step) == 0) {
    p.nth = std::uniform_int_distribution<unsigned>(1, 30)(rng);
  }
  return p;
}

trial_plan parse_plan(const std::string& text) {
  trial_plan p;
  if (text == "random") {
    return p;
  }
  auto hash = text.find('#');
  p.step = text.substr(0, hash);
  p.nth = hash == std::string::npos ? 1 : static_cast<unsigned>(std::stoul(text.substr(hash + 1)));
  return p;
}

} // namespace

int main(int argc, char** argv) {
  CLI::App app{"randomized crash trials of berthd"};
  std::string sources;
  size_t trials = 20;
  uint64_t seed = static_cast<uint64_t>(
    std::chrono::system_clock::now().time_since_epoch().count() % 1000000007);
  std::string replay;
  long window_ms = 2000;
  app.add_option("--sources", sources, "the source tree whose crash steps are tried")->required();
  app.add_option("--trials", trials, "how many trials (default 20)");
  app.add_option("--seed", seed, "the first trial's seed; trial i has seed+i");
  app.add_option("--plan", replay, "replay one trial: STEP#N or random (with --seed)");
  app.add_option("--window-ms", window_ms, "the latest moment of a random kill (default 2000)");
  CLI11_PARSE(app, argc, argv);

  if (auto why = berth::csi_test::berthd_process::missing_prerequisite(); !why.empty()) {
    return skip(why);
  }
  berth::csi_test::berthd_process::clean_stale_runs();
  auto steps = crash_steps_in(sources);
  if (steps.empty()) {
    std::printf("crash trials: no test_crash_point(\"...\") call found under %s\n",
                sources.c_str());
    return 1;
  }
  std::string list;
  for (const auto& s : steps) {
    list += " " + s;
  }
  std::printf("crash trials: %zu named step(s) in %s:%s\n", steps.size(), sources.c_str(),
              list.c_str());
  if (replay.empty() && trials < steps.size()) {
    std::printf("crash trials: %zu trials cannot try every one of the %zu steps\n", trials,
                steps.size());
  }

  trial_options opts;
  opts.longest_window = std::chrono::milliseconds(window_ms);
  std::mt19937_64 plans{seed};
  size_t failed = 0;
  std::map<std::string, size_t> reached;
  std::map<std::string, size_t> missed;
  std::set<std::string> once_a_start;
  auto began = std::chrono::steady_clock::now();
  size_t n = replay.empty() ? trials : 1;
  for (size_t i = 0; i < n; ++i) {
    auto plan = replay.empty() ? plan_of(i, steps, once_a_start, plans) : parse_plan(replay);
    auto trial_seed = seed + i;
    std::printf("trial %zu/%zu seed %llu plan %s\n", i + 1, n,
                static_cast<unsigned long long>(trial_seed), plan.describe().c_str());
    std::fflush(stdout);
    auto r = run_trial(opts, trial_seed, plan);
    for (const auto& line : r.lines) {
      std::printf("  %s\n", line.c_str());
    }
    if (!plan.step.empty()) {
      ++(r.step_reached ? reached : missed)[plan.step];
    }
    if (r.while_starting) {
      once_a_start.insert(plan.step);
    }
    if (!r.problems.empty()) {
      ++failed;
      std::printf("  FAILED (replay: --seed %llu --plan %s):\n",
                  static_cast<unsigned long long>(trial_seed), plan.describe().c_str());
      for (const auto& p : r.problems) {
        std::printf("    %s\n", p.c_str());
      }
    }
    std::fflush(stdout);
  }
  auto secs = std::chrono::duration_cast<std::chrono::seconds>(std::chrono::steady_clock::now()
                                                               - began);
  std::printf("\ncrash trials: %zu run, %zu failed, in %lld s (first seed %llu)\n", n, failed,
              static_cast<long long>(secs.count()), static_cast<unsigned long long>(seed));
  for (const auto& s : steps) {
    std::printf("  step %-28s crashed at %zu time(s), not reached %zu time(s)\n", s.c_str(),
                reached[s], missed[s]);
  }
  return failed == 0 ? 0 : 1;
}
