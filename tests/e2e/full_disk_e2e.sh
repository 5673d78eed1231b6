#!/usr/bin/env bash
# A full disk does not stop berthd (docs/design.md, "Durable state"), end to end: the state
# directory is a small ext4 image on a loop device; a volume mounted from it is filled from
# inside, so the journal's filesystem is full. berthd must still record Unmounts, start
# again (its start-up compaction writes a snapshot) and record Removes. berthd runs with
# its default options (the journal reserve is on by default).
#
#   usage: full_disk_e2e.sh PATH/TO/berthd PATH/TO/berthctl
#
# Exit 77 (skipped, loudly) without root, mkfs.ext4 or loop devices.

source "$(dirname "$0")/lib.sh"

e2e_init "${1:-}" "${2:-}"
need_cmd mkfs.ext4 e2fsprogs
need_cmd losetup mount

avail_kib() {
  df --output=avail -k "$STATE" | tail -n 1 | tr -d ' '
}

# free_kib: free space root could still use (statvfs f_bfree).
free_kib() {
  echo $(($(stat -f -c '%f * %S' "$STATE") / 1024))
}

# check_full WHAT: passes when a 1 KiB write to the filesystem fails with ENOSPC. (ext4 keeps
# about 2% in reserve that no data write can use; statvfs still counts it free.)
check_full() {
  local probe="$(vol_mnt full1)/probe" out
  if out=$(dd if=/dev/zero of="$probe" bs=1k count=1 conv=fsync 2>&1); then
    fail "$1" "a 1 KiB write fails with ENOSPC" "it succeeded ($(free_kib) KiB free)"
  elif [[ "$out" == *"No space left"* ]]; then
    pass "$1 (a 1 KiB write fails; $(free_kib) KiB counted free, $(avail_kib) KiB for non-root)"
  else
    fail "$1" "a 1 KiB write fails with ENOSPC" "$out"
  fi
  rm -f "$probe"
}

# fill_up FILE: appends zeros to FILE (as root, so the reserved blocks go too) until the
# filesystem takes no more, also what delayed allocation hands back after a sync.
fill_up() {
  local file="$1" before after i
  dd if=/dev/zero of="$file" bs=1M oflag=append conv=notrunc >/dev/null 2>&1
  for i in 1 2 3 4 5 6; do
    sync
    before=$(stat -c %s "$file")
    dd if=/dev/zero of="$file" bs=1k oflag=append conv=notrunc >/dev/null 2>&1
    sync
    after=$(stat -c %s "$file")
    ((after > before)) || break
  done
}

IMAGE="$E2E_TMP/state.img"
truncate -s 128M "$IMAGE"
mkfs.ext4 -q -F "$IMAGE" >/dev/null 2>&1 || skip "mkfs.ext4 cannot format $IMAGE"
mkdir -p "$STATE"
if ! mount -o loop "$IMAGE" "$STATE" 2>"$E2E_TMP/mount.err"; then
  skip "cannot loop-mount an ext4 image ($(cat "$E2E_TMP/mount.err")); needs loop devices"
fi
log "state directory $STATE is a 128 MiB ext4 image ($(avail_kib) KiB free)"

if ! start_berthd "$STATE" "$PLUGIN_SOCK" "$ADMIN_SOCK"; then
  fail "berthd starts on the small filesystem" "see the log above"
  e2e_finish
fi
pass "berthd starts on the small filesystem"
check "Create full1" "" "$(plugin_err Create '{"Name":"full1"}')"
check "Create full2" "" "$(plugin_err Create '{"Name":"full2"}')"
check "Create full3" "" "$(plugin_err Create '{"Name":"full3"}')"
check "Mount full1 m1" "" "$(mount_id full1 m1)"
check "Mount full2 m2" "" "$(mount_id full2 m2)"
check "Mount full3 m3" "" "$(mount_id full3 m3)"
check "Mount full3 m4" "" "$(mount_id full3 m4)"

# -- a pod fills its volume, and with it the state filesystem --------------------------------------
fill_up "$(vol_mnt full1)/fill"
check_full "the state filesystem is full"

check "Unmount full2 m2 is recorded on the full filesystem" "" "$(unmount_id full2 m2)"
check_unmounted "after the Unmount on a full disk" full2
check "Unmount full3 m3 is recorded" "" "$(unmount_id full3 m3)"
# More records than fit in the journal's last partly used block.
failed=""
for i in $(seq 1 40); do
  err=$(mount_id full3 "busy-$i")
  [[ -z "$err" ]] || { failed="Mount busy-$i: $err"; break; }
  err=$(unmount_id full3 "busy-$i")
  [[ -z "$err" ]] || { failed="Unmount busy-$i: $err"; break; }
done
check "40 Mount/Unmount pairs of full3 are recorded on the full filesystem" "" "$failed"
check "berthctl: full3 still held by m4" "m4=1" "$(ctl_mounts full3)"
check "Remove full2 is recorded on the full filesystem" "" "$(plugin_err Remove '{"Name":"full2"}')"
check "List no longer shows full2" "full1 full3" "$(listed)"
if grep -q "journal reserve" "$BERTHD_LOG"; then
  pass "berthd's log says it used the journal reserve"
else
  fail "berthd's log says it used the journal reserve" "a line about the journal reserve" \
    "$(grep -i -e "space" -e "full" "$BERTHD_LOG" | tail -n 3)"
fi

# -- berthd restarts on the full filesystem ---------------------------------------------------------
# The pod writes on: whatever the Remove freed is taken again.
fill_up "$(vol_mnt full1)/fill"
check_full "the state filesystem is full again before the restart"
if stop_berthd; then
  pass "berthd stops cleanly on the full filesystem"
else
  fail "berthd stops cleanly on the full filesystem" "exit 0 after SIGTERM" "see above"
fi
if start_berthd "$STATE" "$PLUGIN_SOCK" "$ADMIN_SOCK"; then
  pass "berthd starts again on the full filesystem (start-up compaction)"
else
  fail "berthd starts again on the full filesystem (start-up compaction)" "it serves" \
    "$(tail -n 5 "$BERTHD_LOG")"
  e2e_finish
fi
check "after the restart: List shows full1 full3" "full1 full3" "$(listed)"
check "after the restart: full1 held by m1" "m1=1" "$(ctl_mounts full1)"
check "after the restart: full3 held by m4" "m4=1" "$(ctl_mounts full3)"
check "Unmount full3 m4 after the restart" "" "$(unmount_id full3 m4)"
check_unmounted "full3 after its last Unmount" full3
check "Remove full3 on the full filesystem" "" "$(plugin_err Remove '{"Name":"full3"}')"
kill9_berthd
if start_berthd "$STATE" "$PLUGIN_SOCK" "$ADMIN_SOCK"; then
  pass "berthd starts after kill -9 on the full filesystem"
else
  fail "berthd starts after kill -9 on the full filesystem" "it serves" "$(tail -n 5 "$BERTHD_LOG")"
  e2e_finish
fi
check "after kill -9: the Removes and Unmounts are durable" "full1" "$(listed)"
check "after kill -9: full1 still held by m1" "m1=1" "$(ctl_mounts full1)"

# -- the pod's data goes, the space comes back -------------------------------------------------------
check "Unmount full1 m1" "" "$(unmount_id full1 m1)"
check "Remove full1 (its data frees the filesystem)" "" "$(plugin_err Remove '{"Name":"full1"}')"
check "List is empty" "" "$(listed)"
check "Create works again once space is free" "" "$(plugin_err Create '{"Name":"again"}')"
reserve="$STATE/state/reserve"
if [[ -f "$reserve" ]]; then
  pass "the journal reserve exists ($(du -k "$reserve" | cut -f1) KiB allocated)"
else
  fail "the journal reserve exists" "$reserve" "missing"
fi
if stop_berthd; then
  pass "berthd stops cleanly"
else
  fail "berthd stops cleanly" "exit 0 after SIGTERM" "see above"
fi

e2e_finish
