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
# (c) refusals: a directory snapshot, an unknown name; none changes a snapshot (a base newer
#     than its target: admin_snapshot_diff_test, whose snapshots are taken seconds apart)
# (d) berthctl export --since: the delta, applied to a copy of its base image by a reader
#     written here from the format's description (Python), gives the volume's image byte
#     for byte; its hash holds; a delta since a snapshot of another volume, or of a
#     directory volume, is refused
# (e) berthctl import --onto: the delta applied to a volume restored from its base makes it
#     the volume's image byte for byte, and its files read back; refused, each leaving the
#     volume as it was: onto a mounted volume, onto one mounted since its restore (so no
#     longer its base's bytes), a damaged delta, onto a directory volume; berthd killed
#     between the delta's copy and its rename leaves the volume as it was and no copy
# docs/running.md, "Changed block tracking of Docker snapshots" and "Deltas of block volumes".
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
check "(c) create dir1 (a directory volume)" "" "$(create_vol dir1)"
check_ok "(c) snapshot dir1 dsnap" ctl snapshot create dir1 dsnap
check_ok "(c) snapshot dir1 dsnap2" ctl snapshot create dir1 dsnap2
check_fails "(c) a diff of directory snapshots is refused" ctl snapshot diff dsnap dsnap2
check_contains "(c) the error says changed blocks are of block snapshots" \
  "changed blocks are known only between the images of block snapshots" "$LAST_OUTPUT"
check_fails "(c) an unknown snapshot is refused" ctl snapshot diff mon ghost
check_contains "(c) the error names it" '"ghost": no Docker snapshot of that name' "$LAST_OUTPUT"
check_fails "(c) a volume's name is no snapshot" ctl snapshot diff mon d1
check "(c) the snapshots are unchanged" "$before" "$(md5sum "$(snap_img mon)" "$(snap_img tue)")"

# -- (d) a delta since a snapshot --------------------------------------------------------
log "(d) berthctl export --since"
check "(d) mount d1 and write h" "" "$(mount_id d1 m3)"
check_ok "(d) write h, 200 KiB" dd if=/dev/urandom of="$mnt/h" bs=4k count=50 conv=fsync status=none
check "(d) unmount d1" "" "$(unmount_id d1 m3)"
check_ok "(d) berthctl export d1 --since mon > d1.delta" \
  sh -c "'$BERTHCTL' --socket '$ADMIN_SOCK' export d1 --since mon > '$E2E_TMP/d1.delta'"
check_ok "(d) snapshot d1 now (nothing mounted since the export)" ctl snapshot create d1 now
cp --sparse=always "$(snap_img mon)" "$E2E_TMP/applied.img"
# apply_delta DELTA IMAGE: applies DELTA to IMAGE as the format says; prints the header's
# volume and base, the ranges, and whether the hash held.
apply_delta() {
  python3 - "$1" "$2" <<'PY'
import hashlib, json, struct, sys
data = open(sys.argv[1], "rb").read()
magic = b"berth-delta 1\n"
assert data.startswith(magic), "no magic"
end_head = data.index(b"\n", len(magic))
head = json.loads(data[len(magic):end_head])
pos = end_head + 1
ranges = 0
with open(sys.argv[2], "r+b") as img:
    img.truncate(head["size_bytes"])
    while True:
        offset, length = struct.unpack(">QQ", data[pos:pos + 16])
        pos += 16
        if offset == 2**64 - 1:
            break
        img.seek(offset)
        img.write(data[pos:pos + length])
        pos += length
        ranges += 1
digest_ok = hashlib.sha256(data[:pos]).digest() == data[pos:pos + 32] and len(data) == pos + 32
print(head["volume"], head["base"]["name"], ranges == length, "hash-ok" if digest_ok else "hash-bad")
PY
}
check "(d) the delta names d1 and mon, counts its ranges, and its hash holds" "d1 mon True hash-ok" \
  "$(apply_delta "$E2E_TMP/d1.delta" "$E2E_TMP/applied.img" 2>&1)"
check "(d) mon's image with the delta applied is d1's image, byte for byte" same \
  "$(cmp -s "$E2E_TMP/applied.img" "$(snap_img now)" && echo same || echo differs)"
delta_bytes=$(stat -c %s "$E2E_TMP/d1.delta")
check "(d) the delta is far smaller than the 64 MiB volume (under 2 MiB)" yes \
  "$( ((delta_bytes < 2 * 1048576)) && echo yes || echo "no: $delta_bytes bytes")"
check_ok "(d) berthctl export d1 --since now > none.delta" \
  sh -c "'$BERTHCTL' --socket '$ADMIN_SOCK' export d1 --since now > '$E2E_TMP/none.delta'"
cp --sparse=always "$(snap_img now)" "$E2E_TMP/applied-none.img"
check "(d) a delta since a snapshot of the unchanged volume holds no range" "d1 now True hash-ok" \
  "$(apply_delta "$E2E_TMP/none.delta" "$E2E_TMP/applied-none.img" 2>&1)"
check "(d) ... and no range at all" 0 \
  "$(python3 -c 'import sys; d=open(sys.argv[1],"rb").read(); print(int.from_bytes(d[-40:-32],"big"))' "$E2E_TMP/none.delta")"
check_fails "(d) a delta of d1 since a snapshot of dir1 is refused" \
  sh -c "'$BERTHCTL' --socket '$ADMIN_SOCK' export d1 --since dsnap > '$E2E_TMP/x.delta'"
check_contains "(d) the error says changed blocks are of block snapshots" "changed blocks are known only" \
  "$LAST_OUTPUT"
check "(d) create e1 (block)" "" "$(create_vol e1 '{"backend":"block","size":"64M"}')"
check_ok "(d) snapshot e1 e-snap" ctl snapshot create e1 e-snap
check_fails "(d) a delta of d1 since e1's snapshot is refused" \
  sh -c "'$BERTHCTL' --socket '$ADMIN_SOCK' export d1 --since e-snap > '$E2E_TMP/x.delta'"
check_contains "(d) the error names both volumes" 'is of volume "e1", not of "d1"' "$LAST_OUTPUT"
check "(d) no export copy is left" "" "$(ls -A "$BLOCK/exports" 2>/dev/null || true)"

# -- (e) a delta imported onto a volume restored from its base -------------------------------
log "(e) berthctl import --onto"
vol_img() {
  echo "$BLOCK/volumes/$1.img"
}
same_as() {
  cmp -s "$1" "$2" && echo same || echo differs
}
onto() {
  "$BERTHCTL" --socket "$ADMIN_SOCK" import --onto "$1" <"$2"
}
check "(e) create r1 from snapshot mon" "" "$(create_vol r1 '{"from-snapshot":"mon"}')"
check "(e) r1 holds mon's bytes" same "$(same_as "$(vol_img r1)" "$(snap_img mon)")"
check "(e) mount r1" "" "$(mount_id r1 mr1)"
check_fails "(e) a delta onto r1 while it is mounted is refused" onto r1 "$E2E_TMP/d1.delta"
check_contains "(e) the error says it is in use" "volume in use: r1 is mounted by mr1" \
  "$LAST_OUTPUT"
check "(e) unmount r1" "" "$(unmount_id r1 mr1)"
r1_before=$(md5sum <"$(vol_img r1)")
check_fails "(e) a delta onto r1, mounted since its restore, is refused" onto r1 "$E2E_TMP/d1.delta"
check_contains "(e) the error names r1 and mon" \
  "volume \"r1\" does not hold snapshot \"mon\"'s bytes" \
  "$LAST_OUTPUT"
check "(e) r1 is as it was" "$r1_before" "$(md5sum <"$(vol_img r1)")"
check "(e) create r2 from snapshot mon" "" "$(create_vol r2 '{"from-snapshot":"mon"}')"
python3 - "$E2E_TMP/d1.delta" "$E2E_TMP/damaged.delta" <<'PY'
import sys
data = bytearray(open(sys.argv[1], "rb").read())
data[len(data) // 2] ^= 1
open(sys.argv[2], "wb").write(data)
PY
check_fails "(e) a damaged delta is refused" onto r2 "$E2E_TMP/damaged.delta"
check_contains "(e) the error says the hash does not hold" "does not match its SHA-256" \
  "$LAST_OUTPUT"
check "(e) r2 still holds mon's bytes" same "$(same_as "$(vol_img r2)" "$(snap_img mon)")"
check_fails "(e) a delta onto a directory volume is refused" onto dir1 "$E2E_TMP/d1.delta"
check_contains "(e) the error names both backends" \
  "is a local volume and snapshot \"mon\" a block one" \
  "$LAST_OUTPUT"
check_fails "(e) a delta onto no volume is refused" onto ghost "$E2E_TMP/d1.delta"
check_contains "(e) the error names it" "no such volume: ghost" "$LAST_OUTPUT"
CRASH_LABEL="(e)"
BERTHD_ARGS=()
crash_during block-rewrite-edited "an import of a delta onto r2" onto r2 "$E2E_TMP/d1.delta"
check "(e) r2 still holds mon's bytes after the crash" same \
  "$(same_as "$(vol_img r2)" "$(snap_img mon)")"
check_contains "(e) the start deleted the delta's copy of r2's image" "/.r2." \
  "$(grep 'image sweep: deleted' "$BERTHD_LOG")"
check "(e) no copy is left beside the images" "" "$(ls -A "$BLOCK/volumes" | grep '^\.' || true)"
check "(e) no spooled delta is left" "" "$(ls -A "$STATE/imports" 2>/dev/null || true)"
check_ok "(e) berthctl import --onto r2 < d1.delta" onto r2 "$E2E_TMP/d1.delta"
check_contains "(e) it says what r2 now holds" \
  "volume r2 now holds volume d1 as it was exported since snapshot mon: " \
  "$(cat "$E2E_TMP/.cmd-out")"
check "(e) r2's image is d1's as exported, byte for byte" same \
  "$(same_as "$(vol_img r2)" "$(snap_img now)")"
check "(e) mount d1" "" "$(mount_id d1 m5)"
h_sum=$(md5sum <"$mnt/h")
check_nonempty "(e) d1's h is read" "$h_sum"
check "(e) unmount d1" "" "$(unmount_id d1 m5)"
check "(e) mount r2" "" "$(mount_id r2 mr2)"
check "(e) r2's h reads as d1's" "$h_sum" "$(md5sum <"$BLOCK/mounts/r2/h")"
check "(e) unmount r2" "" "$(unmount_id r2 mr2)"
check "(e) no spooled delta is left after it" "" "$(ls -A "$STATE/imports" 2>/dev/null || true)"

for s in mon mon-again tue now e-snap dsnap dsnap2; do
  check_ok "berthctl snapshot rm $s" ctl snapshot rm "$s"
done
for v in d1 dir1 e1 r1 r2; do
  check "remove $v" "" "$(plugin_err Remove "{\"Name\":\"$v\"}")"
done
check "no loop device of berth's images is left" "" \
  "$(losetup -l -n -O BACK-FILE 2>/dev/null | grep -F "$BLOCK/" || true)"
check_ok "berthd stops on SIGTERM" stop_berthd
e2e_finish
