#!/usr/bin/env bash
# sanitizers.options_reach_tests: the options scripts/sanitizers.sh sets reach the tests
# ctest runs. Without them a sanitizer still runs, but with its defaults: no leak
# suppressions, recoverable reports that do not end the test, no TSan suppressions.
#
#   options_test.sh asan|tsan SUPPRESSIONS_DIR
set -euo pipefail
mode=$1
dir=$2
bad=0
# want VAR PATTERN: VAR holds PATTERN (a colon-separated option), or the test fails.
want() {
  local value=${!1-}
  if [[ ":$value:" != *":$2:"* ]]; then
    echo "options_test: $1 does not hold $2 (it is \"$value\"): run the gate through scripts/sanitizers.sh" >&2
    bad=1
  fi
}
case "$mode" in
  asan)
    want ASAN_OPTIONS halt_on_error=1
    want ASAN_OPTIONS detect_leaks=1
    want LSAN_OPTIONS "suppressions=$dir/lsan.supp"
    want UBSAN_OPTIONS halt_on_error=1
    ;;
  tsan)
    want TSAN_OPTIONS halt_on_error=1
    want TSAN_OPTIONS "suppressions=$dir/tsan.supp"
    ;;
  *)
    echo "usage: options_test.sh asan|tsan SUPPRESSIONS_DIR" >&2
    exit 2
    ;;
esac
exit "$bad"
