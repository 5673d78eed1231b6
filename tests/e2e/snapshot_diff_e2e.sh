#!/usr/bin/env bash
# berthctl snapshot diff on real Docker block volumes (ext4 on a real loop device), through
# the plugin protocol: the ranges are checked against where ext4 itself put the changed
# file blocks (debugfs bmap on the snapshot images), not against berth's own arithmetic.
#
#   usage: snapshot_diff_e2e.sh PATH/TO/berthd PATH/TO/berthctl
#
# (a) two snapshots with nothing mounted between them hold the same bytes: no range
# (b) a block rewritten in a file and a new file: each one's blocks lie in a listed range, a
#     block of the file that was not rewritten lies in none, and the whole delta is small
# (c) refusals: the newer snapshot as the base, a directory snapshot, an unknown name;
#     none changes a snapshot
# docs/running.md, "Changed block tracking of Docker snapshots".
# Exit 77 (skipped, loudly) when root or loop devices are missing.

source "$(dirname "$0")/lib.sh"

e2e_init "${1:-}" "${2:-}"
need_cmd losetup mount
need_cmd mkfs.ext4 e2fsprogs
need_cmd debugfs e2fsprogs
if ! losetup -f >/dev/null 2>&1; then
  skip "no free loop device (losetup -f failed): block volumes need /dev/loop*"
fi
BLOCK="$STATE/block"
if ! start_berthd "$STATE" "$PLUGIN_SOCK" "$ADMIN_SOCK"; then
  fail "berthd starts" "see $BERTHD_LOG"
  e2e_finish
fi

ctl() {
  "$BERTHCTL" --socket "$ADMIN_SOCK" "$@"
}
snap_img() {
  echo "$BLOCK/snapshots/$1.img"
}
# image_offset SNAPSHOT FILE BLOCK: the byte offset in SNAPSHOT's image of FILE's logical
# 4-KiB block BLOCK, as ext4 maps it (debugfs bmap: the physical block).
image_offset() {
  local physical
  physical=$(debugfs -R "bmap /$2 $3" "$(snap_img "$1")" 2>/dev/null | tail -n 1)
  echo $((physical * 4096))
}
# covered JSON OFFSET: "yes" when a range of the diff JSON holds OFFSET, else "no".
covered() {
  json_get "$1" "'yes' if any(r['offset'] <= $2 < r['offset'] + r['length'] for r in d['ranges']) else 'no'"
}

# -- (a) the same bytes ------------------------------------------------------------------
log "(a) two snapshots with nothing written between them"
check "(a) create d1 (ext4, 64M)" "" \
  "$(create_vol d1 '{"backend":"block","size":"64M","fstype":"ext4"}')"
check "(a) mount d1" "" "$(mount_id d1 m1)"
mnt="$BLOCK/mounts/d1"
check_ok "(a) write f, 1 MiB of random bytes" \
  dd if=/dev/urandom of="$mnt/f" bs=64k count=16 conv=fsync status=none
check "(a) unmount d1" "" "$(unmount_id d1 m1)"
check_ok "(a) snapshot d1 mon" ctl snapshot create d1 mon
check_ok "(a) snapshot d1 mon-again" ctl snapshot create d1 mon-again
check_contains "(a) berthctl snapshot diff mon mon-again: they hold the same bytes" \
  "snapshot mon-again holds the same bytes as mon" "$(ctl snapshot diff mon mon-again 2>&1)"
same=$(ctl snapshot diff mon mon-again --json)
check "(a) --json lists no range" 0 "$(json_get "$same" 'len(d["ranges"])')"
check "(a) and names the volume and the block size" "d1 65536" \
  "$(json_get "$same" 'd["volume"] + " " + str(d["block_bytes"])')"

# -- (b) a rewritten block and a new file ----------------------------------------------------
log "(b) the changed blocks, where ext4 put them"
check "(b) mount d1 again" "" "$(mount_id d1 m2)"
check_ok "(b) rewrite f's block 128 (4 KiB at 512 KiB) in place" \
  dd if=/dev/urandom of="$mnt/f" bs=4k count=1 seek=128 conv=notrunc,fsync status=none
check_ok "(b) write g, 128 KiB" dd if=/dev/urandom of="$mnt/g" bs=64k count=2 conv=fsync status=none
check "(b) unmount d1" "" "$(unmount_id d1 m2)"
check_ok "(b) snapshot d1 tue" ctl snapshot create d1 tue
delta=$(ctl snapshot diff mon tue --json)
check "(b) berthctl snapshot diff mon tue --json answers" yes "$([[ -n $delta ]] && echo yes)"
f128=$(image_offset tue f 128)
g0=$(image_offset tue g 0)
g31=$(image_offset tue g 31)
f0=$(image_offset mon f 0)
check "(b) f's block 128 is where it was (rewritten in place)" "$f128" "$(image_offset mon f 128)"
check "(b) a range holds f's rewritten block (at $f128)" yes "$(covered "$delta" "$f128")"
check "(b) a range holds g's first block (at $g0)" yes "$(covered "$delta" "$g0")"
check "(b) a range holds g's last block (at $g31)" yes "$(covered "$delta" "$g31")"
check "(b) no range holds f's block 0 (at $f0), which did not change" no "$(covered "$delta" "$f0")"
changed=$(json_get "$delta" 'd["changed_bytes"]')
log "(b) $changed bytes changed in $(json_get "$delta" 'len(d["ranges"])') ranges"
# 132 KiB of data, ext4's metadata of it (inode, bitmaps, directory, superblock) and the
# journal's commits of that metadata: at most a few 64-KiB blocks each. 2 MiB is 1/32 of
# the volume, and far below the 1 MiB file and the rest that did not change.
check "(b) the delta is small: at most 2 MiB of 64 MiB" yes \
  "$( ((changed > 0 && changed <= 2 * 1048576)) && echo yes || echo "no: $changed bytes")"
check "(b) the ranges are in order and do not overlap" yes \
  "$(json_get "$delta" "'yes' if all(a['offset'] + a['length'] <= b['offset'] for a, b in zip(d['ranges'], d['ranges'][1:])) else 'no'")"

# -- (c) refusals -------------------------------------------------------------------------
log "(c) what a diff refuses"
before=$(md5sum "$(snap_img mon)" "$(snap_img tue)")
check_fails "(c) the newer snapshot as the base is refused" ctl snapshot diff tue mon
check_contains "(c) the error says which is older" "name the older one as the base" "$LAST_OUTPUT"
check "(c) create dir1 (a directory volume)" "" "$(create_vol dir1)"
check_ok "(c) snapshot dir1 dsnap" ctl snapshot create dir1 dsnap
check_ok "(c) snapshot dir1 dsnap2" ctl snapshot create dir1 dsnap2
check_fails "(c) a diff of directory snapshots is refused" ctl snapshot diff dsnap dsnap2
check_contains "(c) the error says a diff is of block snapshots" \
  "a diff compares the images of block snapshots" "$LAST_OUTPUT"
check_fails "(c) an unknown snapshot is refused" ctl snapshot diff mon ghost
check_contains "(c) the error names it" '"ghost": no Docker snapshot of that name' "$LAST_OUTPUT"
check_fails "(c) a volume's name is no snapshot" ctl snapshot diff mon d1
check "(c) the snapshots are unchanged" "$before" "$(md5sum "$(snap_img mon)" "$(snap_img tue)")"

for s in mon mon-again tue dsnap dsnap2; do
  check_ok "berthctl snapshot rm $s" ctl snapshot rm "$s"
done
check "remove d1 dir1" "" "$(plugin_err Remove '{"Name":"d1"}')$(plugin_err Remove '{"Name":"dir1"}')"
check "no loop device of berth's images is left" "" \
  "$(losetup -l -n -O BACK-FILE 2>/dev/null | grep -F "$BLOCK/" || true)"
check_ok "berthd stops on SIGTERM" stop_berthd
e2e_finish
