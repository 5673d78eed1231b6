#!/usr/bin/env bash
# Smoke run of berth-bench against a real berthd: both modes run, report no
# errors and end with their JSON line. No timing is asserted here; the figures
# of docs/benchmarks.md come from runs by hand.
#
#   usage: bench_smoke.sh PATH/TO/berthd PATH/TO/berth-bench

source "$(dirname "$0")/lib.sh"

BENCH="${2:-}"
e2e_init "${1:-}" ""
if [[ -z "$BENCH" || ! -x "$BENCH" ]]; then
  echo "usage: $0 PATH/TO/berthd PATH/TO/berth-bench" >&2
  exit 2
fi

# check_json WHAT OUTPUT: the last line is JSON with errors == 0 and the named keys.
check_json() {
  local what="$1" last
  last=$(tail -n 1 <<<"$2")
  shift 2
  local keys="$*"
  check "$what: last line is JSON with errors 0 and keys $keys" ok "$(json_get "$last" \
    '"ok" if d.get("errors") == 0 and all(k in d for k in "'"$keys"'".split()) else "bad: %s" % d' \
    2>/dev/null || echo "not JSON: $last")"
}

if start_berthd "$STATE" "$PLUGIN_SOCK" "$ADMIN_SOCK"; then
  pass "berthd starts"
  out=$(timeout 120 "$BENCH" docker --socket "$PLUGIN_SOCK" --volumes 200 --concurrency 8 \
    --seconds 2 --pid "$BERTHD_PID" --prefix smoke 2>&1)
  rc=$?
  echo "$out"
  check "berth-bench docker exits 0" 0 "$rc"
  check_json "berth-bench docker" "$out" pairs_per_s p50_ms p99_ms p999_ms errors volumes \
    concurrency seconds rss_mb
  check "no volume left mounted after the run" 0 \
    "$(awk -v d="$STATE/" 'index($5, d) == 1' /proc/self/mountinfo | wc -l)"
  stop_berthd || fail "berthd stops on SIGTERM"
fi

out=$(timeout 300 "$BENCH" restart --berthd "$BERTHD" --state-dir "$E2E_TMP/restart-state" \
  --socket "$E2E_TMP/restart.sock" --volumes 100 --ids-per-volume 2 --concurrency 4 \
  --berthd-arg --metrics-address=127.0.0.1:0 2>&1)
rc=$?
echo "$out"
check "berth-bench restart exits 0" 0 "$rc"
check_json "berth-bench restart" "$out" restart_ms rss_mb volumes
check "no volume left mounted after the restart run" 0 \
  "$(awk -v d="$E2E_TMP/restart-state/" 'index($5, d) == 1' /proc/self/mountinfo | wc -l)"

check_fails "berth-bench without arguments is a usage error" "$BENCH"
check_fails "berth-bench docker without --socket is a usage error" "$BENCH" docker --volumes 1
check_contains "the usage error says what is missing" "--socket" "$LAST_OUTPUT"
e2e_finish
