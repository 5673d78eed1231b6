#!/usr/bin/env bash
# The whole test suite: installs what is missing, builds, runs every test
# (unit, fault injection, end to end against a real dockerd) through ctest.
#
#   scripts/test.sh [--require-all] [CTEST ARGS...]
#
# A test that cannot run here (no root, no loop devices, no dockerd) skips loudly.
# With --require-all, or when CI=true, a skip fails the run instead, naming each
# skipped test and what it missed: a CI machine must not go green without the
# end-to-end suites.
set -euo pipefail
cd "$(dirname "$0")/.."
require_all=0
ctest_args=()
for arg in "$@"; do
  if [[ "$arg" == --require-all ]]; then
    require_all=1
  else
    ctest_args+=("$arg")
  fi
done
if [[ "${CI:-}" == true ]]; then
  require_all=1
fi
# The e2e scripts' skip helper fails instead of skipping under this (tests/e2e/lib.sh).
export BERTH_REQUIRE_ALL="$require_all"
scripts/install-deps.sh --test
scripts/build.sh
cd build
rc=0
ctest --output-on-failure --timeout 900 -j1 ${ctest_args[@]+"${ctest_args[@]}"} | tee ctest.out \
  || rc=$?
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
    exit 1
  fi
fi
exit "$rc"
