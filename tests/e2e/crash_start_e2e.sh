#!/usr/bin/env bash
# Crash-safe start (docs/design.md, "All or nothing, across crashes"), end to end: the real
# berthd is killed at each step of its start (BERTH_TEST_CRASH_AT=<step> makes it
# _exit(137) there, as kill -9 would), then started again. A new boot must stay what
# reconciliation decided: counts cleared, nothing mounted, also after one more kill -9 and
# start.
#
#   usage: crash_start_e2e.sh PATH/TO/berthd PATH/TO/berthctl
#
# The steps, in the order berthd reaches them:
#   start-loaded               state loaded, nothing reconciled
#   start-reconciled           reconciled in memory, nothing written
#   compact-snapshot-written   the new snapshot written to snapshot.json.tmp and fsync'd
#   compact-snapshot-renamed   snapshot.json replaced, directory not yet fsync'd
#   compact-snapshot-durable   the rename fsync'd, the old journal not yet emptied
#   compact-journal-cut        the journal emptied
#   start-compacted            the start-up compaction done, no actor yet
#   start-serving              sockets open, "berthd ready"
# A new boot is simulated: the host mounts are removed and the snapshot's boot ID changed.
# Exit 77 (skipped, loudly) when not root.

source "$(dirname "$0")/lib.sh"

e2e_init "${1:-}" "${2:-}"

STEPS=(start-loaded start-reconciled compact-snapshot-written compact-snapshot-renamed
  compact-snapshot-durable compact-journal-cut start-compacted start-serving)

# set_boot_id ID: rewrites the boot ID in STATE/state/snapshot.json (berthd stopped).
set_boot_id() {
  python3 - "$STATE/state/snapshot.json" "$1" <<'PY'
import json, sys
path, boot = sys.argv[1], sys.argv[2]
with open(path) as f:
    d = json.load(f)
d["boot_id"] = boot
with open(path, "w") as f:
    json.dump(d, f)
PY
}

# crash_at STEP: runs berthd with BERTH_TEST_CRASH_AT=STEP; prints its exit status.
crash_at() {
  echo "==== $(date +%H:%M:%S) crash run: BERTH_TEST_CRASH_AT=$1" >>"$BERTHD_LOG"
  BERTH_TEST_CRASH_AT="$1" timeout 60 "$BERTHD" --state-dir "$STATE" --docker-socket "$PLUGIN_SOCK" \
    --admin-socket "$ADMIN_SOCK" "${METRICS_ARGS[@]}" "${DOCKER_API_ARGS[@]}" >>"$BERTHD_LOG" 2>&1
  echo $?
}

# -- an old boot: two volumes mounted by IDs, the mounts in the journal ------------------------
log "making the state of an earlier boot"
if ! start_berthd "$STATE" "$PLUGIN_SOCK" "$ADMIN_SOCK"; then
  fail "berthd starts on a fresh state dir" "see the log above"
  e2e_finish
fi
check "Create c1" "" "$(plugin_err Create '{"Name":"c1"}')"
check "Create c2" "" "$(plugin_err Create '{"Name":"c2"}')"
check "Mount c1 a" "" "$(mount_id c1 a)"
check "Mount c1 b" "" "$(mount_id c1 b)"
check "Mount c2 c" "" "$(mount_id c2 c)"
check "Mount c2 c again" "" "$(mount_id c2 c)"
check "berthctl: c1 counts a=1 b=1" "a=1 b=1" "$(ctl_mounts c1)"
kill9_berthd
# The host reboots: every mount is gone, and the kernel has another boot ID.
umount_under "$STATE/volumes"
set_boot_id "e2e-earlier-boot"
journal_records=$(python3 - "$STATE/state/journal.log" <<'PY'
import sys
data = open(sys.argv[1], "rb").read()
pos = n = 0
while pos + 8 <= len(data):
    pos += 8 + int.from_bytes(data[pos:pos + 4], "little")
    n += 1
print(n)
PY
)
if ((journal_records >= 4)); then
  pass "the journal holds the Mounts of the earlier boot ($journal_records records)"
else
  fail "the journal holds the Mounts of the earlier boot" ">= 4 records" "$journal_records"
fi
cp -a "$STATE/state" "$E2E_TMP/earlier-boot"

# -- a crash at each step, then a start --------------------------------------------------------
for step in "${STEPS[@]}"; do
  log "crash at $step"
  rm -rf "$STATE/state"
  cp -a "$E2E_TMP/earlier-boot" "$STATE/state"
  rm -f "$STATE/state/reserve"
  check "($step) berthd dies at the step (exit 137)" 137 "$(crash_at "$step")"
  umount_under "$STATE/volumes" # what the crashed start mounted, a reboot would not keep
  if ! start_berthd "$STATE" "$PLUGIN_SOCK" "$ADMIN_SOCK"; then
    fail "($step) berthd starts after the crash" "see the log above"
    continue
  fi
  pass "($step) berthd starts after the crash"
  check "($step) c1's counts stay cleared (new boot)" 0 "$(ctl_total c1)"
  check "($step) c2's counts stay cleared (new boot)" 0 "$(ctl_total c2)"
  check "($step) berthctl: c1 not mounted" false "$(ctl_mounted c1)"
  check "($step) c1 not mounted on the host" 0 "$(mount_count "$(vol_mnt c1)")"
  check "($step) c2 not mounted on the host" 0 "$(mount_count "$(vol_mnt c2)")"
  kill9_berthd
  if start_berthd "$STATE" "$PLUGIN_SOCK" "$ADMIN_SOCK"; then
    check "($step) after one more kill -9 and start: c1 still cleared" 0 "$(ctl_total c1)"
    check "($step) after one more kill -9 and start: c2 still cleared" 0 "$(ctl_total c2)"
    check "($step) Mount c1 works" "" "$(mount_id c1 z)"
    check "($step) Unmount c1 works" "" "$(unmount_id c1 z)"
    check "($step) c1 unmounted" 0 "$(mount_count "$(vol_mnt c1)")"
    if stop_berthd; then
      pass "($step) berthd stops cleanly"
    else
      fail "($step) berthd stops cleanly" "exit 0 after SIGTERM" "see above"
    fi
  else
    fail "($step) berthd starts a second time" "see the log above"
  fi
  umount_under "$STATE/volumes"
done

e2e_finish
