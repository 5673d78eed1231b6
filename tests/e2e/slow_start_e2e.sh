#!/usr/bin/env bash
# Start-up is not held up by volumes whose backend hangs (docs/design.md, "Reconciliation
# at start-up"): each volume reconciles in its own actor, through the executor, with its
# timeout.
#
#   usage: slow_start_e2e.sh PATH/TO/berthd PATH/TO/berthctl
#
# Three volumes are mounted by IDs, berthd stops (SIGTERM; host mounts stay), and the
# host mounts of two of them are removed by hand: at the next start both must be
# mounted again, and their backend calls are made to stall for STALL_MS. berthd must
# answer long before that; the healthy volume serves at once; the stalled ones answer
# a retryable error at once instead of hanging, and serve once their remount returns.
# Before volumes reconciled in their own actors, berthd remounted volume after volume
# before opening any socket.
# Exit 77 (skipped, loudly) when not root.

source "$(dirname "$0")/lib.sh"

e2e_init "${1:-}" "${2:-}"

STALL_MS=6000
TIMEOUT_MS=1000

now_ms() {
  date +%s%3N
}

if ! start_berthd "$STATE" "$PLUGIN_SOCK" "$ADMIN_SOCK"; then
  fail "berthd starts on a fresh state dir" "see the log above"
  e2e_finish
fi
for v in ok stuck1 stuck2; do
  check "Create $v" "" "$(plugin_err Create "{\"Name\":\"$v\",\"Opts\":{}}")"
  check "Mount $v c1" "" "$(mount_id "$v" c1)"
  check_mounted "Mount $v" "$v"
done
check_ok "berthd stops (SIGTERM), the host mounts stay" stop_berthd
for v in stuck1 stuck2; do
  umount "$(vol_mnt "$v")"
  check "$v's host mount removed by hand" 0 "$(mount_count "$(vol_mnt "$v")")"
done

started=$(now_ms)
if ! start_berthd "$STATE" "$PLUGIN_SOCK" "$ADMIN_SOCK" --test-stall-volume stuck1,stuck2 \
  --test-stall-ms "$STALL_MS" --backend-timeout-ms "$TIMEOUT_MS"; then
  fail "berthd starts with two volumes whose remount stalls" "see the log above"
  e2e_finish
fi
took=$(($(now_ms) - started))
log "berthd answered ${took} ms after its start (the stalled remounts take ${STALL_MS} ms each)"
if ((took < TIMEOUT_MS)); then
  pass "berthd answers before any stalled remount could finish (${took} ms)"
else
  fail "berthd answers before any stalled remount could finish" \
    "expected under ${TIMEOUT_MS} ms" "took ${took} ms"
fi

plugin_timed Unmount '{"Name":"ok","ID":"c1"}'
check "the healthy volume serves at once: Unmount ok c1" "" "$TIMED_ERR"
check_unmounted "Unmount ok" ok
if [[ -n "$TIMED_MS" ]] && ((TIMED_MS < TIMEOUT_MS)); then
  pass "the healthy volume is not held up by the stalled ones (${TIMED_MS} ms)"
else
  fail "the healthy volume is not held up by the stalled ones" "under ${TIMEOUT_MS} ms" "${TIMED_MS:-no reply}"
fi

# A stalled volume: the request waits at most for its reconcile's timeout, then fails as
# retryable; retries fail at once and start no second backend call.
plugin_timed Mount '{"Name":"stuck1","ID":"c2"}'
check_contains "Mount of a volume whose reconcile hangs is refused as retryable" "retry" "$TIMED_ERR"
if [[ -n "$TIMED_MS" ]] && ((TIMED_MS < TIMEOUT_MS + 1000)); then
  pass "the refusal comes within the backend timeout (${TIMED_MS} ms)"
else
  fail "the refusal comes within the backend timeout" "under $((TIMEOUT_MS + 1000)) ms" "${TIMED_MS:-no reply}"
fi
plugin_timed Mount '{"Name":"stuck1","ID":"c2"}'
check_contains "a retry names the hung call" "reconcile started at" "$TIMED_ERR"
if [[ -n "$TIMED_MS" ]] && ((TIMED_MS < 500)); then
  pass "the retry fails fast (${TIMED_MS} ms)"
else
  fail "the retry fails fast" "under 500 ms" "${TIMED_MS:-no reply}"
fi

# Once the stalled remount returns, the volume reconciles again and serves.
if wait_until $((STALL_MS / 1000 + 15)) is_mounted "$(vol_mnt stuck1)"; then
  pass "stuck1 is mounted again once its stalled call returned"
  check "stuck1 is mounted exactly once" 1 "$(mount_count "$(vol_mnt stuck1)")"
else
  fail "stuck1 is mounted again once its stalled call returned" "a mount at $(vol_mnt stuck1)" "none"
fi
if wait_until $((STALL_MS / 1000 + 15)) is_mounted "$(vol_mnt stuck2)"; then
  pass "stuck2 is mounted again once its stalled call returned"
else
  fail "stuck2 is mounted again once its stalled call returned" "a mount at $(vol_mnt stuck2)" "none"
fi
# Mounted and counted: this Mount only counts (no backend call, so no stall).
serves() {
  [[ "$(mount_id stuck2 c2)" == "" ]]
}
if wait_until 10 serves; then
  pass "stuck2 serves again: Mount c2 counted"
else
  fail "stuck2 serves again" "Mount c2 ok" "$(mount_id stuck2 c2)"
fi
check_ok "berthd stops (SIGTERM)" stop_berthd
e2e_finish
