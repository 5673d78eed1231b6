#!/usr/bin/env bash
# Volume health on real Docker block volumes (real loop devices, real xfs and ext4): each
# abnormal condition is made for real, seen through Docker's Status (VolumeDriver.Get),
# berthctl inspect and berth_volume_abnormal{reason}, and seen to clear when its cause is
# gone. The CSI services' view of the same table: tests/csi/volume_health_test.cpp.
#
#   usage: volume_health_e2e.sh PATH/TO/berthd PATH/TO/berthctl
#
# (a) a healthy mounted volume says healthy everywhere, and every reason's series is 0
# (b) its image deleted under the mount: image_missing; put back: healthy
# (c) its image truncated while unmounted: image_short; grown back: healthy
# (d) its mount unmounted behind berthd: mount_gone; Unmount, Mount: healthy
# (e) xfs shut down under the mount (xfs_io -x -c shutdown): filesystem_shut_down; Unmount:
#     healthy, and the volume mounts again
# (f) ext4 remounted read-only under the mount: filesystem_read_only; Unmount: healthy
# (g) ext4 records an error: filesystem_errors; shut down: filesystem_shut_down; Unmount:
#     healthy
# docs/running.md, "Volume health". Exit 77 (skipped, loudly) when root, loop devices or
# xfsprogs are missing.

source "$(dirname "$0")/lib.sh"

e2e_init "${1:-}" "${2:-}"
need_cmd losetup mount
need_cmd mkfs.ext4 e2fsprogs
need_cmd mkfs.xfs xfsprogs
need_cmd xfs_io xfsprogs
if ! losetup -f >/dev/null 2>&1; then
  skip "no free loop device (losetup -f failed): block volumes need /dev/loop*"
fi
BLOCK="$STATE/block"
# A look every 100 ms, so a condition shows (and clears) within a second.
if ! start_berthd "$STATE" "$PLUGIN_SOCK" "$ADMIN_SOCK" --health-interval-ms 100; then
  fail "berthd starts" "see $BERTHD_LOG"
  e2e_finish
fi

on_cleanup detach_block_loops

img() {
  echo "$BLOCK/volumes/$1.img"
}
mnt() {
  echo "$BLOCK/mounts/$1"
}
# status NAME EXPR: EXPR of Docker's Status of NAME (`s`), as VolumeDriver.Get answers it.
status() {
  json_get "$(plugin Get "{\"Name\":\"$1\"}")" "(lambda s: $2)(d['Volume']['Status'])"
}
# reasons NAME: the reasons Docker's Status names, space-separated ("" when healthy).
reasons() {
  status "$1" "' '.join(c['reason'] for c in s.get('conditions', []))"
}
# has_reason NAME REASON / healthy NAME: for wait_until.
has_reason() {
  [[ " $(reasons "$1") " == *" $2 "* ]]
}
healthy() {
  [[ "$(status "$1" "s['health']")" == healthy ]]
}
# abnormal_series REASON: berth_volume_abnormal{reason="REASON"} on /metrics.
abnormal_series() {
  curl -sS --max-time 10 "$(metrics_url)/metrics" |
    awk -v r="berth_volume_abnormal{reason=\"$1\"}" '$1 == r { print $2 }'
}
# seen NAME REASON WHAT: waits (10 s) for REASON, then checks berthctl and the metric agree.
seen() {
  local name="$1" reason="$2" what="$3"
  check_ok "$what: Docker's Status names $reason" wait_until 10 has_reason "$name" "$reason"
  check "$what: Status says abnormal" abnormal "$(status "$name" "s['health']")"
  check "$what: berthctl inspect names $reason" yes \
    "$(json_get "$(ctl_json "$name")" "'yes' if '$reason' in [c['reason'] for c in d.get('conditions', [])] else d")"
  check "$what: berth_volume_abnormal{reason=\"$reason\"} counts it" 1 "$(abnormal_series "$reason")"
  log "$what: $(status "$name" "'; '.join(c['message'] for c in s['conditions'])")"
}
# cleared NAME REASON WHAT: waits (10 s) until NAME is healthy and the series is 0 again.
cleared() {
  check_ok "$3: healthy again" wait_until 10 healthy "$1"
  check "$3: berth_volume_abnormal{reason=\"$2\"} is 0 again" 0 "$(abnormal_series "$2")"
  check_contains "$3: the log said when $2 began" "volume $1 is abnormal ($2)" "$(cat "$BERTHD_LOG")"
  check_contains "$3: and when it ended" "volume $1: $2 has ended" "$(cat "$BERTHD_LOG")"
}

# -- (a) healthy ----------------------------------------------------------------------------
log "(a) a healthy volume"
check "(a) create x1 (ext4, 64M)" "" "$(create_vol x1 '{"backend":"block","size":"64M"}')"
check "(a) mount x1" "" "$(mount_id x1 m1)"
check "(a) Docker's Status says healthy" healthy "$(status x1 "s['health']")"
check "(a) berthctl inspect says healthy" healthy "$(ctl_field x1 health)"
check "(a) every reason's series is there, at 0" \
  "0 0 0 0 0 0 0 0 0 0 0" \
  "$(for r in image_missing image_short image_replaced device_detached mount_gone mount_foreign \
      filesystem_shut_down filesystem_errors filesystem_read_only modify_failing call_hung; do
      abnormal_series "$r"; done | tr '\n' ' ' | sed 's/ $//')"

# -- (b) the image deleted ------------------------------------------------------------------
log "(b) the image deleted under a mounted volume"
check_ok "(b) move x1's image away" mv "$(img x1)" "$STATE/x1.img.away"
seen x1 image_missing "(b)"
check_ok "(b) put it back" mv "$STATE/x1.img.away" "$(img x1)"
cleared x1 image_missing "(b)"

# -- (c) the image truncated ------------------------------------------------------------------
log "(c) the image truncated while unmounted"
check "(c) unmount x1" "" "$(unmount_id x1 m1)"
check_ok "(c) truncate x1's image to 32M" truncate -s 32M "$(img x1)"
seen x1 image_short "(c)"
check_ok "(c) grow it back to 64M" truncate -s 64M "$(img x1)"
cleared x1 image_short "(c)"

# -- (d) the mount gone -----------------------------------------------------------------------
log "(d) the mount unmounted behind berthd"
check "(d) create x2 (ext4, 64M)" "" "$(create_vol x2 '{"backend":"block","size":"64M"}')"
check "(d) mount x2" "" "$(mount_id x2 m1)"
check_ok "(d) umount x2's mount by hand" umount "$(mnt x2)"
seen x2 mount_gone "(d)"
check "(d) unmount x2" "" "$(unmount_id x2 m1)"
cleared x2 mount_gone "(d)"
check "(d) mount x2 again" "" "$(mount_id x2 m2)"
check "(d) unmount x2" "" "$(unmount_id x2 m2)"

# -- (e) xfs shut down --------------------------------------------------------------------
log "(e) xfs shut down under a mounted volume"
check "(e) create x3 (xfs, 300M, sparse)" "" "$(create_vol x3 '{"backend":"block","size":"300M","fstype":"xfs"}')"
check "(e) mount x3" "" "$(mount_id x3 m1)"
check_ok "(e) xfs_io -x -c shutdown" xfs_io -x -c shutdown "$(mnt x3)"
seen x3 filesystem_shut_down "(e)"
check "(e) unmount x3" "" "$(unmount_id x3 m1)"
cleared x3 filesystem_shut_down "(e)"
check "(e) x3 mounts again (xfs replays its log)" "" "$(mount_id x3 m2)"
check_ok "(e) and is written" dd if=/dev/zero of="$(mnt x3)/f" bs=64k count=1 conv=fsync status=none
check "(e) unmount x3" "" "$(unmount_id x3 m2)"

# -- (f) ext4 read-only ---------------------------------------------------------------------
log "(f) ext4 remounted read-only under a mounted volume"
check "(f) create e1 (ext4, 64M)" "" "$(create_vol e1 '{"backend":"block","size":"64M","fstype":"ext4"}')"
check "(f) mount e1" "" "$(mount_id e1 m1)"
check_ok "(f) mount -o remount,ro" mount -o remount,ro "$(mnt e1)"
seen e1 filesystem_read_only "(f)"
check "(f) unmount e1" "" "$(unmount_id e1 m1)"
cleared e1 filesystem_read_only "(f)"

# -- (g) ext4 errors and an ext4 shut down --------------------------------------------------
log "(g) ext4 records an error, then shuts down, under a mounted volume"
check "(g) create e2 (ext4, 64M)" "" "$(create_vol e2 '{"backend":"block","size":"64M","fstype":"ext4"}')"
check "(g) mount e2" "" "$(mount_id e2 m1)"
dev=$(findmnt -n -o SOURCE "$(mnt e2)")
# The kernel's own error path (ext4_error), as a corrupt block would take it; e2's
# superblock says errors=continue (mke2fs's default), so it stays read-write.
check_ok "(g) ext4 records an error (/sys/fs/ext4/${dev##*/}/trigger_fs_error)" \
  sh -c "echo berth-health-test >/sys/fs/ext4/${dev##*/}/trigger_fs_error"
seen e2 filesystem_errors "(g)"
check_ok "(g) xfs_io -x -c shutdown (ext4 takes it too)" xfs_io -x -c shutdown "$(mnt e2)"
seen e2 filesystem_shut_down "(g)"
check "(g) unmount e2" "" "$(unmount_id e2 m1)"
cleared e2 filesystem_shut_down "(g)"
check "(g) and filesystem_errors, not seen while unmounted" 0 "$(abnormal_series filesystem_errors)"

for v in x1 x2 x3 e1 e2; do
  check "remove $v" "" "$(plugin_err Remove "{\"Name\":\"$v\"}")"
done
e2e_finish
