#include "tests/e2e/crash_trials/trial.hpp"

#include <cstdlib>
#include <fstream>
#include <random>
#include <sstream>
#include <thread>

#include <rapidjson/document.h>

#include "core/errors.hpp"
#include "tests/csi/berthd_process.hpp"
#include "tests/e2e/crash_trials/checker.hpp"
#include "tests/e2e/crash_trials/clients.hpp"
#include "tests/e2e/crash_trials/workload.hpp"

namespace berth::crash_trials {

namespace {

using csi_test::berthd_process;
using std::chrono::milliseconds;

constexpr int docker_workers = 3;
constexpr int csi_workers = 2;
constexpr int slots_per_worker = 2;
constexpr int shared_volumes = 2;
constexpr int publishers = 4; ///< of the shared CSI volume, each at slots_per_worker targets

endpoints endpoints_of(const berthd_process& bp) {
  return {bp.state_dir() + "/docker.sock", bp.state_dir() + "/admin.sock", bp.endpoint(),
          bp.kubelet_dir()};
}

bool log_says(const berthd_process& bp, const std::string& needle) {
  std::ifstream in(bp.log_path());
  std::stringstream text;
  text << in.rdbuf();
  return text.str().find(needle) != std::string::npos;
}

std::string crash_line(const trial_plan& plan) {
  return "crashing at step " + plan.step;
}

std::string tally_line(const tally& t) {
  return std::to_string(t.done.load()) + " done, " + std::to_string(t.refused.load())
         + " refused, " + std::to_string(t.unknown.load()) + " in flight at the kill";
}

/// Runs the workload until `window` ends or berthd ends by itself, then SIGKILLs a
/// berthd still running. True when it ended by itself.
bool run_cycle(berthd_process& bp, trial_model& model, uint64_t seed, milliseconds window,
               std::string& summary) {
  workload w{model, endpoints_of(bp), seed};
  w.start();
  auto deadline = std::chrono::steady_clock::now() + window;
  bool by_itself = false;
  while (std::chrono::steady_clock::now() < deadline) {
    if (bp.exited()) {
      by_itself = true;
      break;
    }
    std::this_thread::sleep_for(milliseconds(5));
  }
  // Killed while the workers still send: the requests in flight are the point.
  if (!by_itself) {
    bp.kill9();
  }
  w.stop();
  summary = tally_line(w.counted());
  return by_itself;
}

/// Waits (60 s) until berthd is ready, reconciled and certain; else why not.
std::string wait_settled(const berthd_process& bp) {
  admin_client admin{endpoints_of(bp).admin_socket};
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  std::string last;
  while (std::chrono::steady_clock::now() < deadline) {
    auto a = admin.get("/v1/status");
    last = a.detail.substr(0, 400);
    if (a.done()) {
      rapidjson::Document doc;
      doc.Parse(a.detail.c_str(), a.detail.size());
      auto is = [&doc](const char* key, auto want) {
        auto it = doc.FindMember(key);
        return it != doc.MemberEnd() && it->value == want;
      };
      if (!doc.HasParseError() && doc.IsObject() && is("ready", true) && is("uncertain", 0)
          && is("reconcile_pending", 0)) {
        return "";
      }
    }
    std::this_thread::sleep_for(milliseconds(20));
  }
  return "berthd did not settle within 60 s (ready, nothing uncertain or pending); last "
         "status: " + last;
}

/// Creates the shared volumes, and stages the CSI one (cycle A, before the workload).
std::string create_shared(const berthd_process& bp, const trial_model& model) {
  plugin_client plugin{endpoints_of(bp).plugin_socket};
  for (const auto& [name, ids] : model.shared.volumes) {
    auto a = plugin.call("Create", "{\"Name\":" + json_string(name) + ",\"Opts\":{}}");
    if (!a.done()) {
      return "Create of shared volume " + name + ": " + a.detail;
    }
  }
  if (auto err = create_and_stage(endpoints_of(bp), model.publications.volume); !err.empty()) {
    return "the shared CSI volume: " + err;
  }
  return "";
}

/// Starts berthd with BERTH_TEST_CRASH_AT set to `crash_at` ("": unset).
std::string start_with(berthd_process& bp, const std::string& crash_at) {
  if (!crash_at.empty()) {
    ::setenv("BERTH_TEST_CRASH_AT", crash_at.c_str(), 1);
  }
  auto err = bp.start();
  ::unsetenv("BERTH_TEST_CRASH_AT");
  return err;
}

milliseconds random_window(std::mt19937_64& rng, milliseconds longest) {
  return milliseconds(std::uniform_int_distribution<long>(200, longest.count())(rng));
}

} // namespace

std::string trial_plan::describe() const {
  return step.empty() ? "random" : step + "#" + std::to_string(nth);
}

trial_report run_trial(const trial_options& opts, uint64_t seed, const trial_plan& plan) {
  trial_report r;
  std::mt19937_64 rng{seed};
  berthd_process bp;
  bp.extra_args = {"--docker-api", ""}; // never the host's dockerd
  trial_model model{docker_workers, csi_workers, slots_per_worker, shared_volumes, publishers};
  auto fail = [&](std::string what) {
    r.problems.push_back(std::move(what) + "\n" + bp.log_tail(30));
    return r;
  };

  // A: a state worth crashing over, then a kill at a random moment.
  if (auto err = start_with(bp, ""); !err.empty()) {
    return fail("A: berthd did not start: " + err);
  }
  if (auto err = create_shared(bp, model); !err.empty()) {
    return fail("A: " + err);
  }
  std::string summary;
  auto window = random_window(rng, opts.longest_window);
  if (run_cycle(bp, model, seed * 3 + 1, window, summary)) {
    return fail("A: berthd ended by itself");
  }
  r.lines.push_back("A: SIGKILL after " + std::to_string(window.count()) + " ms; " + summary);

  // B: the named step, or a second random kill.
  auto crash_at = plan.step.empty() ? "" : plan.describe();
  if (auto err = start_with(bp, crash_at); !err.empty()) {
    if (plan.step.empty() || !log_says(bp, crash_line(plan))) {
      return fail("B: berthd did not start: " + err);
    }
    r.step_reached = true;
    r.while_starting = true;
    r.lines.push_back("B: crashed at " + crash_at + " while starting");
  } else {
    window = plan.step.empty() ? random_window(rng, opts.longest_window) : opts.step_window;
    bool by_itself = run_cycle(bp, model, seed * 3 + 2, window, summary);
    if (by_itself && (plan.step.empty() || !log_says(bp, crash_line(plan)))) {
      return fail("B: berthd ended by itself, not at a planned step");
    }
    r.step_reached = by_itself;
    r.lines.push_back(by_itself ? "B: crashed at " + crash_at + "; " + summary
                                : "B: SIGKILL after " + std::to_string(window.count()) + " ms"
                                    + (plan.step.empty() ? "" : " (" + crash_at + " not reached)")
                                    + "; " + summary);
  }

  // C: restart, settle, check.
  if (auto err = start_with(bp, ""); !err.empty()) {
    return fail("C: berthd did not start after the crash: " + err);
  }
  if (auto err = wait_settled(bp); !err.empty()) {
    return fail("C: " + err);
  }
  if (auto deferred = wait_deferred_detaches(bp.root()); !deferred.empty()) {
    r.lines.push_back("C: " + deferred);
  }
  auto seen = observe(endpoints_of(bp).admin_socket, bp.root());
  if (!seen) {
    return fail("C: cannot read the state: " + berth::describe(seen.error()));
  }
  auto found = compare(model, *seen);
  r.problems.insert(r.problems.end(), found.begin(), found.end());
  r.lines.push_back("C: " + std::to_string(seen->records.size()) + " record(s), "
                    + std::to_string(seen->mount_points.size()) + " mount(s), "
                    + std::to_string(seen->loops.size()) + " loop device(s) checked; "
                    + (found.empty() ? "all as acknowledged" : std::to_string(found.size())
                                                                 + " problem(s)"));
  if (int rc = bp.stop(); rc != 0) {
    r.problems.push_back("C: graceful stop ended with status " + std::to_string(rc) + "\n"
                         + bp.log_tail(30));
  }
  if (!r.problems.empty()) {
    r.problems.push_back("berthd's log (last lines):\n" + bp.log_tail(60));
  }
  return r;
}

} // namespace berth::crash_trials
