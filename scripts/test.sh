#!/usr/bin/env bash
# The whole test suite: installs what is missing, builds, runs every test
# (unit, fault injection, end to end against a real dockerd) through ctest, then the
# gates: the fuzz gate, every libFuzzer target for 30 s on its corpus (scripts/fuzz.sh),
# the ASan + LeakSanitizer + UBSan gate (scripts/sanitizers.sh asan) over the suites the
# fuzz preset's tree builds beside the fuzz targets, and the TSan gate
# (scripts/sanitizers.sh tsan) over the executor, telemetry, release-rule and sync suites
# (docs/testing.md, "Sanitizers", says why the actor suites need BERTH_TSAN_ACTORS=1).
#
#   scripts/test.sh [--require-all] [--no-gates] [CTEST ARGS...]
#
# --no-gates runs only the ctest suite (local hacking; CI never passes it). Each stage's
# wall time is printed at the end (docs/testing.md, "Budget").
#
# A test that cannot run here (no root, no loop devices, no dockerd) skips loudly.
# With --require-all, or when CI=true, a skip fails the run instead, naming each
# skipped test and what it missed: a CI machine must not go green without the
# end-to-end suites.
set -euo pipefail
cd "$(dirname "$0")/.."
require_all=0
gates=1
ctest_args=()
for arg in "$@"; do
  if [[ "$arg" == --require-all ]]; then
    require_all=1
  elif [[ "$arg" == --no-gates ]]; then
    gates=0
  else
    ctest_args+=("$arg")
  fi
done
if [[ "${CI:-}" == true ]]; then
  require_all=1
fi
# The e2e scripts' skip helper fails instead of skipping under this (tests/e2e/lib.sh).
export BERTH_REQUIRE_ALL="$require_all"
timings=()
# timed NAME: records how long the stage that just ended took since $stage_start.
timed() {
  timings+=("$(printf '%-28s %5d s' "$1" $((SECONDS - stage_start)))")
  stage_start=$SECONDS
}
print_timings() {
  echo
  echo "== wall time per stage"
  printf '   %s\n' "${timings[@]}"
}
stage_start=$SECONDS
scripts/install-deps.sh --test
timed "install-deps"
scripts/build.sh
timed "build (release)"
cd build
rc=0
ctest --output-on-failure --timeout 900 -j1 ${ctest_args[@]+"${ctest_args[@]}"} | tee ctest.out \
  || rc=$?
timed "ctest (release)"
if ((require_all)); then
  # ctest counts a skip (exit 77, or GoogleTest's "[  SKIPPED ]") as not failed: look.
  skipped=$(sed -n '/The following tests did not run:/,/^$/p' ctest.out \
              | sed -n 's/^[[:space:]]*[0-9]* - \(.*\) (Skipped)$/\1/p')
  if [[ -n "$skipped" ]]; then
    echo
    echo "############################################################################"
    echo "## FAILED: tests were skipped, and --require-all (or CI=true) requires them:"
    while IFS= read -r name; do
      # The reason: the skip lines of that test's output.
      reason=$(awk -v t="$name" '
        index($0, " Test: " t) > 0 && substr($0, length($0) - length(t) + 1) == t { on = 1; next }
        on && /<end of output>/ { exit }
        on && /SKIPPED:/ { print }
        on && /Skipped$/ { print; getline; print }
      ' Testing/Temporary/LastTest.log | head -n 4)
      echo "##   $name"
      if [[ -n "$reason" ]]; then
        sed 's/^/##       /' <<<"$reason"
      fi
    done <<<"$skipped"
    echo "############################################################################"
    rc=1
  fi
fi
cd ..
failed_gates=()
if ((gates)); then
  if ! scripts/fuzz.sh; then
    failed_gates+=(scripts/fuzz.sh)
  fi
  timed "fuzz gate (build + run)"
  # After the fuzz gate: the ASan gate's tests link the libraries its build compiled.
  if ! scripts/sanitizers.sh asan; then
    failed_gates+=("scripts/sanitizers.sh asan")
  fi
  timed "asan gate (build + run)"
  if ! scripts/sanitizers.sh tsan; then
    failed_gates+=("scripts/sanitizers.sh tsan")
  fi
  timed "tsan gate (build + run)"
fi
print_timings
if ((${#failed_gates[@]})); then
  echo "== FAILED gates: ${failed_gates[*]}"
  rc=1
fi
exit "$rc"
