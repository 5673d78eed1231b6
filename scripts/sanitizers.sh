#!/usr/bin/env bash
# The sanitizer gates (docs/testing.md, "Sanitizers"): builds the suites with a sanitizer
# and runs them, each finding fatal.
#
#   scripts/sanitizers.sh [asan|tsan|all] [CTEST ARGS...]     (all when no argument)
#
# CTEST ARGS narrow a run (e.g. -R '^CounterTable\.'); BERTH_SANITIZE_TARGETS="a b" builds
# only those targets instead of the preset's: both for re-running one suite quickly.
#
# asan: ASan + LeakSanitizer + UBSan (preset debug-asan: the fuzz preset's tree, build-fuzz/,
#       clang-14, its libraries shared with the fuzz gate): the unit, actor, persistence,
#       backend, protocol, telemetry, Engine client and sync suites (asan_binaries below);
#       with BERTH_ASAN_ALL=1 every ctest test but the labels e2e, deploy, layers and style.
# tsan: ThreadSanitizer (preset tsan, build-tsan/, only the threaded suites' binaries): the
#       executor, the telemetry, the dockerd reconciliation, the Engine follower, the release
#       rules; the actor suites too with BERTH_TSAN_ACTORS=1 (see tsan_binaries below).
# Suppressions are tests/sanitizers/*.supp, each entry with its reason. Exits non-zero
# naming each stage that failed.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
# ccache keys on paths relative to the checkout (as scripts/build.sh).
export CCACHE_BASEDIR="${CCACHE_BASEDIR:-$PWD}"
# This build has debug info, and ccache then hashes the working directory too unless
# told not to: without this a clone in another folder compiles everything again.
export CCACHE_NOHASHDIR=1
jobs=$(nproc)

stage=${1:-all}
shift || true
ctest_args=("$@")
targets=()
if [[ -n "${BERTH_SANITIZE_TARGETS:-}" ]]; then
  read -r -a t <<<"$BERTH_SANITIZE_TARGETS"
  targets=(--target "${t[@]}")
fi
case "$stage" in
  asan | tsan | all) ;;
  *)
    echo "usage: scripts/sanitizers.sh [asan|tsan|all]" >&2
    exit 2
    ;;
esac

failed=()

# run_stage NAME CMD...: runs one step, records NAME when it fails.
run_stage() {
  local name=$1
  shift
  echo "== sanitizers: $name"
  local start=$SECONDS
  if "$@"; then
    echo "== sanitizers: $name passed ($((SECONDS - start)) s)"
  else
    echo "== sanitizers: $name FAILED ($((SECONDS - start)) s)"
    failed+=("$name")
    return 1
  fi
}

# suites_regex TREE ENTRY...: a ctest regex of the GoogleTest suites of each ENTRY
# ("path/in/tests:SUITES", SUITES a regex on the suite names), with the check that the
# gate's options reach the tests (tests/sanitizers). Fails naming a binary not built, but
# for one left out by BERTH_SANITIZE_TARGETS.
suites_regex() {
  local tree=$1 entry bin want suites=()
  shift
  for entry in "$@"; do
    bin=$tree/tests/${entry%%:*}
    want=${entry#*:}
    if [[ ! -x "$bin" ]]; then
      if ((${#targets[@]})); then
        continue # not among BERTH_SANITIZE_TARGETS
      fi
      echo "sanitizers: $bin was not built" >&2
      return 1
    fi
    mapfile -t -O "${#suites[@]}" suites < <(
      "$bin" --gtest_list_tests | sed -n 's/^\([^ ][^.]*\)\.$/\1/p' | grep -xE "$want")
  done
  echo "^(($(IFS='|'; echo "${suites[*]}"))\\.|sanitizers\\.options_reach_tests$)"
}

# -- ASan + LSan + UBSan ----------------------------------------------------------------

# The binaries the gate runs, every suite of each; the preset debug-asan builds these.
asan_binaries=(
  "core/core_test:.*"
  "core/telemetry/telemetry_test:.*"
  "persistence/persistence_test:.*"
  "persistence/recovery/recovery_test:.*"
  "backends/backends_test:.*"
  "actors/actors_test:.*"
  "actors/volume_machine_test:.*"
  "actors/volume_driver_test:.*"
  "actors/release_rules_test:.*"
  "actors/persistence_actor_test:.*"
  "protocols/protocols_test:.*"
  "protocols/docker/engine/docker_engine_test:.*"
  "protocols/docker/sync/docker_sync_test:.*"
  "protocols/kube/kube_agent_test:.*"
)
# BERTH_ASAN_ALL=1 adds the CSI, Kubernetes, metrics and programs' suites, and the programs
# their script tests run: about twice the build (gRPC's generated code, the apps).
asan_all_targets=(csi_test kube_test kube_prestop_test metrics_test apps_test berthctl_test
                  drain_test bench_test berthd berthctl berth-bench)

asan_build() {
  local extra=()
  if [[ "${BERTH_ASAN_ALL:-0}" == 1 && ${#targets[@]} == 0 ]]; then
    extra=(--target "${asan_all_targets[@]}")
  fi
  cmake --preset debug-asan >/dev/null &&
    cmake --build --preset debug-asan -j"$jobs" ${targets[@]+"${targets[@]}"} &&
    if ((${#extra[@]})); then cmake --build build-fuzz -j"$jobs" "${extra[@]}"; fi
}

asan_run() {
  local select
  if [[ "${BERTH_ASAN_ALL:-0}" == 1 ]]; then
    # The CSI conformance suite (labels csi;e2e) is not built: its binary's placeholder
    # carries no label, so it is left out by name. Any other binary missing fails as
    # <name>_NOT_BUILT.
    select=(--label-exclude '^(e2e|deploy|layers|style)$' --exclude-regex '^csi_conformance_test_NOT_BUILT$')
  else
    select=(-R "$(suites_regex build-fuzz "${asan_binaries[@]}")") || return 1
  fi
  # halt_on_error: the first report ends the process (ASan stops anyway; this also covers
  # the recoverable kinds). detect_leaks: a leak at exit fails the test, unless lsan.supp
  # names it. UBSan is built with -fno-sanitize-recover=all; halt_on_error says it again
  # for a binary built without it.
  # No comment may sit among the assignments below: a `#` line ends the command there, and
  # the assignments before it no longer reach ctest (sanitizers.options_reach_tests fails then).
  ASAN_OPTIONS="halt_on_error=1:detect_leaks=1:check_initialization_order=1:strict_init_order=1:detect_stack_use_after_return=1" \
  LSAN_OPTIONS="suppressions=$root/tests/sanitizers/lsan.supp:print_suppressions=0" \
  UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1" \
    ctest --test-dir build-fuzz --output-on-failure --timeout 900 -j1 "${select[@]}" \
      ${ctest_args[@]+"${ctest_args[@]}"}
}

# -- TSan -------------------------------------------------------------------------------

# The binaries of the threaded suites, and which of their test suites run (a regex on the
# GoogleTest suite names): backends_test is the executor's only.
tsan_binaries=(
  "actors/release_rules_test:.*"
  "backends/backends_test:executor"
  "core/telemetry/telemetry_test:.*"
  "protocols/docker/sync/docker_sync_test:.*"
  "protocols/docker/engine/docker_engine_test:docker_engine_follower"
)

# The actor suites only with BERTH_TSAN_ACTORS=1: against Debian's CAF, which is not built
# with TSan, every test that spawns an actor reports the hand-over of the actor or of a message
# through CAF's queues, and the frames that would name those reports (the typed actor's
# initialize, match_case's invoke) are also the callers of berth's handlers, so suppressing
# them would hide berth's races too. tsan.supp holds the entries that are CAF's alone.
if [[ "${BERTH_TSAN_ACTORS:-0}" == 1 ]]; then
  tsan_binaries+=("actors/actors_test:.*" "actors/persistence_actor_test:.*")
fi

tsan_build() {
  local extra=()
  if [[ "${BERTH_TSAN_ACTORS:-0}" == 1 && ${#targets[@]} == 0 ]]; then
    extra=(--target actors_test persistence_actor_test)
  fi
  cmake --preset tsan >/dev/null &&
    cmake --build --preset tsan -j"$jobs" ${targets[@]+"${targets[@]}"} &&
    if ((${#extra[@]})); then cmake --build build-tsan -j"$jobs" "${extra[@]}"; fi
}

tsan_run() {
  # The ctest tests of the chosen suites, one process each as the normal run has them.
  local regex
  regex=$(suites_regex build-tsan "${tsan_binaries[@]}") || return 1
  # halt_on_error: the first race ends the test. second_deadlock_stack: both stacks of a
  # lock-order inversion. The suppressions are CAF's own, each with its reason.
  TSAN_OPTIONS="halt_on_error=1:second_deadlock_stack=1:suppressions=$root/tests/sanitizers/tsan.supp:print_suppressions=0" \
    ctest --test-dir build-tsan --output-on-failure --timeout 900 -j1 -R "$regex" \
      ${ctest_args[@]+"${ctest_args[@]}"}
}

if [[ "$stage" == asan || "$stage" == all ]]; then
  if run_stage "asan build" asan_build; then
    run_stage "asan tests" asan_run || true
  fi
fi
if [[ "$stage" == tsan || "$stage" == all ]]; then
  if run_stage "tsan build" tsan_build; then
    run_stage "tsan tests" tsan_run || true
  fi
fi

if ((${#failed[@]})); then
  echo "sanitizers: FAILED: $(IFS=,; echo "${failed[*]}" | sed 's/,/, /g')"
  exit 1
fi
echo "sanitizers: $stage passed"
