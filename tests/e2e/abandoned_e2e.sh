#!/usr/bin/env bash
# Abandoned callers (docs/design.md, "Clients that give up"): dockerd gives up on a plugin
# call after its timeout and closes the connection. A Mount whose client left before its
# turn must not be counted, and a Mount whose answer can no longer be delivered must be
# undone: nobody will ever Unmount those IDs. curl --max-time plays dockerd giving up.
#
#   usage: abandoned_e2e.sh PATH/TO/berthd PATH/TO/berthctl
#
# Exit 77 (skipped, loudly) when not root.

source "$(dirname "$0")/lib.sh"

e2e_init "${1:-}" "${2:-}"

STALL_MS=3000

# mount_giving_up NAME ID SECONDS: a Mount whose client hangs up after SECONDS.
mount_giving_up() {
  curl -sS --max-time "$3" --unix-socket "$PLUGIN_SOCK" \
    -H 'Content-Type: application/vnd.docker.plugins.v1+json' \
    -X POST --data-binary "{\"Name\":\"$1\",\"ID\":\"$2\"}" \
    "http://localhost/VolumeDriver.Mount" >/dev/null 2>&1
}

no_ids() {
  [[ "$(ctl_total "$1")" == 0 ]]
}

if ! start_berthd "$STATE" "$PLUGIN_SOCK" "$ADMIN_SOCK" --test-stall-volume slow \
  --test-stall-ms "$STALL_MS" --backend-timeout-ms 20000; then
  fail "berthd starts" "see the log above"
  e2e_finish
fi
check "Create slow" "" "$(plugin_err Create '{"Name":"slow","Opts":{}}')"

log "a Mount whose client hangs up while the mount runs is undone"
mount_giving_up slow gave-up 1 || true
if wait_until 30 grep -q "Mount (id gave-up) done, but its answer did not reach dockerd" "$BERTHD_LOG"; then
  pass "berthd notices the answer could not be delivered"
else
  fail "berthd notices the answer could not be delivered" "the log line" "none"
fi
if wait_until 30 no_ids slow; then
  pass "the undelivered Mount's ID is dropped again"
else
  fail "the undelivered Mount's ID is dropped again" "no IDs" "$(ctl_mounts slow)"
fi
check_unmounted "the undelivered Mount is unmounted" slow

log "a Mount whose client left while it waited for its turn is never started"
plugin_err Mount '{"Name":"slow","ID":"holder"}' >"$E2E_TMP/holder.out" &
holder=$!
sleep 0.3 # the holder's mount is running (it stalls)
mount_giving_up slow queued 1 || true
wait "$holder"
check "the waiting client's Mount succeeds" "" "$(cat "$E2E_TMP/holder.out")"
check "only the waiting client's ID is counted" "holder=1" "$(ctl_mounts slow)"
check_contains "the abandoned Mount is logged as not started" \
  "mount (id queued) not started: its caller went away" "$(cat "$BERTHD_LOG")"
check_ok "berthd stops (SIGTERM)" stop_berthd
e2e_finish
