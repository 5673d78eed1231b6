#!/usr/bin/env bash
# Builds the libFuzzer targets of tests/fuzz (the `fuzz` preset, clang with ASan and
# UBSan) and runs each for a bounded time on a copy of its seed corpus, so the repo is
# never written. Prints the executions each reached; fails naming every target that
# crashed, leaked, ran out of memory or timed out, and keeps its artifacts.
#
#   scripts/fuzz.sh [--seconds N] [TARGET...]     (default: 30 s each, every target)
set -euo pipefail
cd "$(dirname "$0")/.."
# As scripts/build.sh: ccache keys on paths relative to the checkout.
export CCACHE_BASEDIR="${CCACHE_BASEDIR:-$PWD}"
# This build has debug info, and ccache then hashes the working directory too unless
# told not to: without this a clone in another folder compiles everything again.
export CCACHE_NOHASHDIR=1

seconds=30
targets=()
while (($#)); do
  case "$1" in
    --seconds) seconds="$2"; shift 2 ;;
    --seconds=*) seconds="${1#*=}"; shift ;;
    -h|--help) sed -n '2,7p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    -*) echo "fuzz.sh: unknown flag $1" >&2; exit 2 ;;
    *) targets+=("$1"); shift ;;
  esac
done
if ! [[ "$seconds" =~ ^[0-9]+$ ]] || ((seconds == 0)); then
  echo "fuzz.sh: --seconds needs a positive whole number, not \"$seconds\"" >&2
  exit 2
fi
if ((${#targets[@]} == 0)); then
  for f in tests/fuzz/*_fuzz.cpp; do
    f="${f##*/}"
    targets+=("${f%_fuzz.cpp}")
  done
fi
for t in "${targets[@]}"; do
  if [[ ! -f "tests/fuzz/${t}_fuzz.cpp" ]]; then
    echo "fuzz.sh: no target \"$t\" (tests/fuzz/${t}_fuzz.cpp)" >&2
    exit 2
  fi
done

cmake --preset fuzz >/dev/null
cmake --build --preset fuzz -j"$(nproc)"

# The dictionary of a target: tests/fuzz/NAME.dict, or the JSON one for JSON readers.
dict_of() {
  case "$1" in
    record_json|journal|ecs_import) echo tests/fuzz/json.dict ;;
    *) [[ -f "tests/fuzz/$1.dict" ]] && echo "tests/fuzz/$1.dict" ;;
  esac
  return 0
}

work="$(mktemp -d /tmp/berth-fuzz.XXXXXX)"
export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1}"
if command -v llvm-symbolizer-14 >/dev/null 2>&1; then
  export ASAN_SYMBOLIZER_PATH="$(command -v llvm-symbolizer-14)"
fi
# One target runs on one core (libFuzzer without -jobs), so as many run at once as there
# are cores: each still gets its full --seconds, and the gate takes 1/nproc of the time.
run_target() {
  local t="$1" dict rc=0
  mkdir -p "$work/$t/corpus" "$work/$t/artifacts"
  cp -r "tests/fuzz/corpus/$t/." "$work/$t/corpus/"
  local args=(-max_total_time="$seconds" -rss_limit_mb=2048 -timeout=10 -print_final_stats=1
              -artifact_prefix="$work/$t/artifacts/")
  dict="$(dict_of "$t")"
  if [[ -n "$dict" ]]; then
    args+=(-dict="$dict")
  fi
  "build-fuzz/tests/fuzz/fuzz_$t" "${args[@]}" "$work/$t/corpus" >"$work/$t/log" 2>&1 || rc=$?
  echo "$rc" >"$work/$t/rc"
}
parallel="$(nproc)"
for t in "${targets[@]}"; do
  while (($(jobs -rp | wc -l) >= parallel)); do
    wait -n || true
  done
  run_target "$t" &
done
wait
failed=()
total=0
for t in "${targets[@]}"; do
  rc="$(cat "$work/$t/rc" 2>/dev/null || echo missing)"
  execs="$(sed -n 's/^stat::number_of_executed_units: *//p' "$work/$t/log" | tail -1)"
  execs="${execs:-0}"
  total=$((total + execs))
  if [[ "$rc" != 0 ]]; then
    failed+=("$t")
    echo "fuzz.sh: $t FAILED (exit $rc) after $execs executions; log $work/$t/log"
    grep -E '^(==[0-9]+==ERROR|SUMMARY|fuzz oracle failed|.*runtime error)' "$work/$t/log" | head -5 || true
    ls "$work/$t/artifacts" | sed "s|^|  artifact $work/$t/artifacts/|"
  else
    echo "fuzz.sh: $t ok: $execs executions in ${seconds} s"
  fi
done
echo "fuzz.sh: $total executions in all"
if ((${#failed[@]})); then
  echo "fuzz.sh: failing targets: ${failed[*]}; artifacts and logs in $work" >&2
  exit 1
fi
rm -rf "$work"
