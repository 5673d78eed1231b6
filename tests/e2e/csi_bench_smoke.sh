#!/usr/bin/env bash
# Smoke run of `berth-bench csi` against a real berthd serving CSI: both phases
# run (CreateVolume+DeleteVolume, NodePublish+NodeUnpublish on staged block
# volumes), report no errors and end with their JSON line. No timing is asserted;
# the figures of docs/benchmarks.md come from runs by hand.
#
#   usage: csi_bench_smoke.sh PATH/TO/berthd PATH/TO/berth-bench

source "$(dirname "$0")/lib.sh"

BENCH="${2:-}"
e2e_init "${1:-}" ""
if [[ -z "$BENCH" || ! -x "$BENCH" ]]; then
  echo "usage: $0 PATH/TO/berthd PATH/TO/berth-bench" >&2
  exit 2
fi
need_cmd mkfs.xfs xfsprogs
need_cmd losetup mount
if [[ ! -c /dev/loop-control ]]; then
  skip "needs /dev/loop-control (loop devices) for the block backend"
fi

CSI_SOCK="$E2E_TMP/csi.sock"
WORK="$E2E_TMP/work"
mkdir -p "$WORK"

# Loop devices whose image lies under the temp dir (left only when something failed).
detach_loops() {
  local f dev
  for f in /sys/block/loop*/loop/backing_file; do
    [[ -r "$f" ]] || continue
    if [[ "$(cat "$f" 2>/dev/null)" == "$E2E_TMP/"* ]]; then
      dev="/dev/$(basename "$(dirname "$(dirname "$f")")")"
      losetup -d "$dev" 2>/dev/null || true
    fi
  done
}
loops_under_tmp() {
  local f n=0
  for f in /sys/block/loop*/loop/backing_file; do
    [[ -r "$f" ]] || continue
    [[ "$(cat "$f" 2>/dev/null)" == "$E2E_TMP/"* ]] && n=$((n + 1))
  done
  echo "$n"
}
on_cleanup detach_loops

if ! start_berthd "$STATE" "$PLUGIN_SOCK" "$ADMIN_SOCK" \
  --csi-endpoint "unix://$CSI_SOCK" --node-id smoke-node --kubelet-dir "$WORK"; then
  fail "berthd starts with --csi-endpoint"
  e2e_finish
fi
pass "berthd starts with --csi-endpoint"
if wait_until 30 test -S "$CSI_SOCK"; then
  pass "the CSI socket exists"
else
  fail "the CSI socket exists" "expected $CSI_SOCK" "got nothing within 30 s"
  e2e_finish
fi

out=$(timeout 300 "$BENCH" csi --endpoint "unix://$CSI_SOCK" --concurrency 4 --seconds 2 \
  --pid "$BERTHD_PID" --prefix smoke --work-dir "$WORK" 2>&1)
rc=$?
echo "$out"
check "berth-bench csi exits 0" 0 "$rc"
last=$(tail -n 1 <<<"$out")
check "berth-bench csi: last line is JSON with errors 0, both phases ran, and the keys" ok \
  "$(json_get "$last" '("ok" if d.get("errors") == 0 and d.get("create_delete_pairs", 0) > 0
    and d.get("publish_unpublish_pairs", 0) > 0 and all(k in d for k in
    "create_delete_pairs_per_s create_delete_p50_ms create_delete_p99_ms publish_unpublish_pairs_per_s publish_unpublish_p50_ms publish_unpublish_p99_ms concurrency seconds rss_mb".split())
    else "bad: %s" % d)' 2>/dev/null || echo "not JSON: $last")"
check "no mount left under the temp dir after the run" 0 \
  "$(awk -v d="$E2E_TMP/" 'index($5, d) == 1' /proc/self/mountinfo | wc -l)"
check "no loop device left attached to an image under the temp dir" 0 "$(loops_under_tmp)"
check "the bench removed its work dir" "" "$(ls -A "$WORK")"
stop_berthd || fail "berthd stops on SIGTERM"

check_fails "berth-bench csi without --endpoint is a usage error" "$BENCH" csi --concurrency 1 \
  --seconds 1
check_contains "the usage error says what is missing" "--endpoint" "$LAST_OUTPUT"
e2e_finish
