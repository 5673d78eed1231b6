#!/usr/bin/env bash
# Docker volumes of a hard size (-o backend=block) against a real dockerd and real loop
# devices: every case is checked inside the container and on the host.
#
#   usage: block_volume_e2e.sh PATH/TO/berthd PATH/TO/berthctl
#
# (a) create formats an image and leaves nothing mounted or attached
# (b) df in the container shows the size; a write past it stops with ENOSPC
# (c) berthctl resize under a running container: xfs grows online and the write goes further;
#     ext4 grows online only with CAP_SYS_RESOURCE, else the refusal says so and the
#     filesystem grows at the next Mount
# (d) docker cp in and out of a running container keeps the mount (one count per mount ID)
# (e) kill -9 of berthd under a running container keeps the mount, the count and the device
# (f) -o uid=1000 -o gid=1000 -o mode=0750: a container running as uid 1000 writes the root
# (g) remove: no image, no mount dir, no loop device left; bad options change nothing
# (h) a snapshot of a volume a container is writing to, volumes made of it, and a clone
# (i) kill -9 between an image (or a snapshot's copy) and its record, and during a copy under
#     a writing container: nothing is left, and the frozen filesystem is thawed
# Sizes and growth: docs/running.md, "Volumes of a hard size (-o backend=block)".
# Exit 77 (skipped, loudly) when root, docker.io, a working dockerd or loop devices are missing.

source "$(dirname "$0")/lib.sh"

e2e_init "${1:-}" "${2:-}"
need_cmd losetup mount
need_cmd mkfs.ext4 e2fsprogs
need_cmd mkfs.xfs xfsprogs
if ! losetup -f >/dev/null 2>&1; then
  skip "no free loop device (losetup -f failed): block volumes need /dev/loop*"
fi
BLOCK="$STATE/block"
# Used bytes sampled often, so a check sees a figure within a second.
USAGE_ARGS=(--usage-interval-ms 200)
start_dockerd_and_berthd "${USAGE_ARGS[@]}"

ctl() {
  "$BERTHCTL" --socket "$ADMIN_SOCK" "$@"
}

# block_mnt NAME: the host mount point of a Docker block volume; block_img NAME its image.
block_mnt() {
  echo "$BLOCK/mounts/$1"
}
block_img() {
  echo "$BLOCK/volumes/$1.img"
}

# loop_of NAME: the loop devices backed by NAME's image ("" when none).
loop_of() {
  losetup -j "$(block_img "$1")" -O NAME -n 2>/dev/null | tr '\n' ' ' | sed 's/ $//'
}

block_mounted() {
  is_mounted "$(block_mnt "$1")"
}
block_unmounted() {
  is_unmounted "$(block_mnt "$1")"
}

on_cleanup detach_block_loops

# run_bg NAME VOLUME: a long-running container with VOLUME at /data.
run_bg() {
  dk run -d --network none --name "$1" -v "$2:/data" "$IMG" sleep 300
}

# run_rm_block VOLUME CMD: CMD's output in a throw-away container with VOLUME at /data.
run_rm_block() {
  dk run --rm --network none -v "$1:/data" "$IMG" sh -c "$2" 2>&1
}

stop_rm() {
  dk stop -t 1 "$1" >/dev/null && dk rm "$1" >/dev/null
}

# df_kib CONTAINER: the size of /data in 1 KiB blocks, as df in the container shows it.
df_kib() {
  dk exec "$1" df -k /data | awk 'NR == 2 { print $2 }'
}

# fill CONTAINER FILE MIB: writes up to MIB MiB to /data/FILE; prints "rc=N bytes=B error"
# where B is the file's size after the write and error the first error dd reported.
fill() {
  dk exec "$1" sh -c "dd if=/dev/zero of=/data/$2 bs=1M count=$3 2>/tmp/dd.err; rc=\$?; \
    sync; echo \"rc=\$rc bytes=\$(stat -c %s /data/$2) \$(grep -v records /tmp/dd.err | head -n 1)\""
}

# bytes_of "rc=N bytes=B ...": B.
bytes_of() {
  local w
  for w in $1; do
    [[ "$w" == bytes=* ]] && echo "${w#bytes=}" && return
  done
  echo 0
}

mib() {
  echo $(($1 / 1048576))
}

# -- (a) create ----------------------------------------------------------------------------
log "(a) docker volume create -o backend=block -o size=64M"
check_ok "(a) docker volume create b1 (64M, ext4 by default)" \
  dk volume create -d "$DRIVER" -o backend=block -o size=64M b1
check "(a) b1's image exists" present "$(present "$(block_img b1)")"
check "(a) the image is 64 MiB" 67108864 "$(stat -c %s "$(block_img b1)" 2>&1)"
check "(a) the image holds ext4" ext4 "$(blkid -o value -s TYPE "$(block_img b1)" 2>&1)"
check "(a) no loop device is left attached after Create" "" "$(loop_of b1)"
check "(a) b1 not mounted after Create" 0 "$(mount_count "$(block_mnt b1)")"

# -- (b) the size inside the container ------------------------------------------------------
log "(b) df and ENOSPC in a container"
check_ok "(b) container k1 uses b1" run_bg k1 b1
if wait_until 10 block_mounted b1; then
  pass "(b) b1 mounted on the host while k1 runs"
else
  fail "(b) b1 mounted on the host while k1 runs" "no mountinfo entry for $(block_mnt b1)"
fi
check "(b) the host mount is ext4" ext4 "$(mount_fstype "$(block_mnt b1)")"
check "(b) one loop device backs b1 while mounted" 1 "$(wc -w <<<"$(loop_of b1)")"
size_kib=$(df_kib k1)
check "(b) df in the container: between 48 and 64 MiB (ext4 keeps some for itself)" yes \
  "$( ((size_kib > 48 * 1024 && size_kib <= 64 * 1024)) && echo yes || echo "no: ${size_kib} KiB")"
out=$(fill k1 big 100)
log "(b) writing 100 MiB: $out"
check_contains "(b) the write fails with ENOSPC" "No space left on device" "$out"
got=$(bytes_of "$out")
check "(b) it stopped at about 64 MiB (between 40 and 64 MiB)" yes \
  "$( ((got > 40 * 1048576 && got <= 64 * 1048576)) && echo yes || echo "no: $(mib "$got") MiB")"
check "(b) the image on the host is still 64 MiB" 67108864 "$(stat -c %s "$(block_img b1)" 2>&1)"
# The used-bytes metric against df in the container (both statvfs: (blocks - bfree) * size).
used_metric() {
  curl -s --max-time 5 "$(metrics_url)/metrics" |
    awk '$1 == "berth_volume_used_bytes{volume=\"b1\"}" { print $2 }'
}
df_used=$(dk exec k1 df -k /data | awk 'NR == 2 { print $3 }')
# used_metric_is KIB: the last sample (every 200 ms here) shows KIB used.
used_metric_is() {
  local m
  m=$(used_metric)
  [[ -n "$m" ]] && (( ${m%.*} / 1024 == $1 ))
}
wait_until 10 used_metric_is "$df_used"
metric_used=$(used_metric)
check "(b) berth_volume_used_bytes matches df's Used in the container (KiB)" "$df_used" \
  "$( [[ -n "$metric_used" ]] && echo $((${metric_used%.*} / 1024)) || echo "no series")"
check "(b) berth_volume_limit_bytes is the size" 67108864 \
  "$(curl -s --max-time 5 "$(metrics_url)/metrics" | awk '$1 == "berth_volume_limit_bytes{volume=\"b1\"}" { print $2 }')"
row=$(ctl volumes | awk '$1 == "b1" { print $5 " " $6 }')
check "(b) berthctl volumes shows b1's SIZE and a USED figure" "64M yes" \
  "${row% *} $( [[ "${row#* }" =~ ^[0-9.]+M$ ]] && echo yes || echo "no: ${row#* }")"

# -- (c) growth under a running container ---------------------------------------------------
log "(c) berthctl resize b1 to 128M while k1 runs (ext4)"
check_ok "(c) k1 removes its big file" dk exec k1 rm /data/big
if grep -q '^CapEff:' /proc/self/status &&
  (( (0x$(awk '/^CapEff:/ { print $2 }' /proc/self/status) >> 24) & 1 )); then
  check_ok "(c) berthctl resize b1 128M (ext4 online, CAP_SYS_RESOURCE held)" ctl resize b1 128M
  after=$(fill k1 big 100)
  check "(c) the same 100 MiB write now fits" yes \
    "$( (($(bytes_of "$after") == 100 * 1048576)) && echo yes || echo "no: $after")"
  dk exec k1 rm -f /data/big
else
  log "(c) NOTE: this host lacks CAP_SYS_RESOURCE, so ext4 cannot grow online here; checking the refusal"
  check_fails "(c) berthctl resize b1 128M is refused while mounted" ctl resize b1 128M
  check_contains "(c) the refusal names the missing capability" CAP_SYS_RESOURCE "$LAST_OUTPUT"
  check "(c) the mounted filesystem kept its size" "$size_kib" "$(df_kib k1)"
fi
check_ok "(c) docker stop k1" stop_rm k1
if wait_until 10 block_unmounted b1; then
  pass "(c) b1 unmounted after k1 stops"
else
  fail "(c) b1 unmounted after k1 stops" "still in mountinfo: $(block_mnt b1)"
fi
check "(c) b1's loop device is detached after the last Unmount" "" "$(loop_of b1)"
check_ok "(c) berthctl resize b1 128M while unmounted" ctl resize b1 128M
check "(c) the image is 128 MiB" 134217728 "$(stat -c %s "$(block_img b1)" 2>&1)"
check_ok "(c) container k2 uses b1 (the Mount grows the filesystem)" run_bg k2 b1
grown_kib=$(df_kib k2)
check "(c) df in the container: more than 112 MiB after the Mount" yes \
  "$( ((grown_kib > 112 * 1024 && grown_kib <= 128 * 1024)) && echo yes || echo "no: ${grown_kib} KiB")"
out=$(fill k2 big 100)
check "(c) the 100 MiB write that stopped at 64 MiB now fits" yes \
  "$( (($(bytes_of "$out") == 100 * 1048576)) && echo yes || echo "no: $out")"
check_fails "(c) a shrink to 64M is refused" ctl resize b1 64M
check_ok "(c) docker stop k2" stop_rm k2

log "(c) berthctl resize under a running container (xfs grows online)"
check_ok "(c) docker volume create x1 (xfs, 300M)" \
  dk volume create -d "$DRIVER" -o backend=block -o size=300M -o fstype=xfs x1
check_ok "(c) container k3 uses x1" run_bg k3 x1
x_before=$(df_kib k3)
out=$(fill k3 big 360)
check_contains "(c) a 360 MiB write into 300M fails with ENOSPC" "No space left on device" "$out"
first=$(bytes_of "$out")
check_ok "(c) k3 removes its file" dk exec k3 rm /data/big
check_ok "(c) berthctl resize x1 400M while k3 runs" ctl resize x1 400M
x_after=$(df_kib k3)
check "(c) df in the running container grew by about 100 MiB" yes \
  "$( ((x_after - x_before > 90 * 1024 && x_after - x_before <= 100 * 1024)) && echo yes ||
    echo "no: $x_before -> $x_after KiB")"
out=$(fill k3 big 360)
# xfs keeps room for its log and metadata, so 300M holds less than 300 MiB of data.
check "(c) the same write goes about 100 MiB further after the resize" yes \
  "$( (($(bytes_of "$out") > first + 90 * 1048576)) && echo yes ||
    echo "no: first $(mib "$first") MiB, then $out")"
check "(c) x1 stayed mounted through the resize" 1 "$(mount_count "$(block_mnt x1)")"
check_ok "(c) docker stop k3" stop_rm k3
check_ok "(c) docker volume rm x1" dk volume rm x1

# -- (d) docker cp --------------------------------------------------------------------------
log "(d) docker cp into and out of a running container"
check_ok "(d) container k4 uses b1" run_bg k4 b1
before=$(ctl_mounts b1)
check "(d) berthctl: one mount ID with count 1" 1 "$(ctl_total b1)"
echo "copied in" >"$E2E_TMP/in.txt"
# Each docker cp sends a Mount and an Unmount of k4's own mount ID; berthd logs the Unmount.
cp_unmounts() {
  grep -c "volume b1 unmount counted" "$BERTHD_LOG" 2>/dev/null || true
}
cp_unmounts_reached() {
  (( $(cp_unmounts) >= $1 ))
}
unmounts_before=$(cp_unmounts)
check_ok "(d) docker cp a file into k4" dk cp "$E2E_TMP/in.txt" k4:/data/in.txt
check_ok "(d) k4 writes a file" dk exec k4 sh -c 'echo from-k4 > /data/out.txt'
check_ok "(d) docker cp a file out of k4" dk cp k4:/data/out.txt "$E2E_TMP/out.txt"
check "(d) the copied-out file has the data" from-k4 "$(cat "$E2E_TMP/out.txt" 2>&1)"
if wait_until 10 cp_unmounts_reached $((unmounts_before + 2)); then
  pass "(d) berthd counted both docker cp Unmounts"
else
  fail "(d) berthd counted both docker cp Unmounts" "log: $(grep 'volume b1' "$BERTHD_LOG" | tail -4)"
fi
check "(d) b1 STILL mounted on the host after docker cp in and out" 1 \
  "$(mount_count "$(block_mnt b1)")"
check "(d) k4 sees the copied-in file" "copied in" "$(dk exec k4 cat /data/in.txt 2>&1)"
check "(d) berthctl: the same mount ID, count 1" "$before" "$(ctl_mounts b1)"

# -- (e) kill -9 of berthd under a running container ----------------------------------------
log "(e) kill -9 of berthd while k4 runs"
loop_before=$(loop_of b1)
kill9_berthd
if start_berthd "$STATE" "$PLUGIN_SOCK" "$ADMIN_SOCK" "${USAGE_ARGS[@]}"; then
  pass "(e) berthd starts after kill -9"
else
  fail "(e) berthd starts after kill -9" "see the log above"
fi
check "(e) b1 still mounted after kill -9 and start" 1 "$(mount_count "$(block_mnt b1)")"
check "(e) the same loop device backs b1" "$loop_before" "$(loop_of b1)"
check "(e) berthctl: the count survived kill -9" "$before" "$(ctl_mounts b1)"
check_ok "(e) k4 still writes to b1" dk exec k4 sh -c 'echo after-kill > /data/k'
check "(e) the write reached the volume" after-kill "$(cat "$(block_mnt b1)/k" 2>&1)"
check_ok "(e) docker stop k4" stop_rm k4
if wait_until 10 block_unmounted b1; then
  pass "(e) the restarted berthd unmounts b1 at the last Unmount"
else
  fail "(e) the restarted berthd unmounts b1 at the last Unmount" "still mounted"
fi
check "(e) and detaches its loop device" "" "$(loop_of b1)"

# -- (f) ownership -------------------------------------------------------------------------
log "(f) -o uid=1000 -o gid=1000 -o mode=0750"
check_ok "(f) docker volume create b2 owned by 1000:1000, mode 0750" \
  dk volume create -d "$DRIVER" -o backend=block -o size=32M -o uid=1000 -o gid=1000 -o mode=0750 b2
# /vol is not in the image: dockerd copies nothing into the volume.
check_ok "(f) a container running as uid 1000 writes to b2's root" \
  dk run --rm --network none --user 1000:1000 -v b2:/vol "$IMG" sh -c 'echo mine > /vol/f'
check "(f) the container sees its root as 1000 1000 750" "1000 1000 750" \
  "$(dk run --rm --network none -v b2:/vol "$IMG" stat -c '%u %g %a' /vol 2>&1)"
check "(f) the file belongs to uid 1000" "1000 mine" \
  "$(dk run --rm --network none -v b2:/vol "$IMG" sh -c 'stat -c %u /vol/f; cat /vol/f' 2>&1 | tr '\n' ' ' | sed 's/ $//')"

# -- (h) snapshots and clones ----------------------------------------------------------------
log "(h) a snapshot of a volume a running container writes to, and volumes made of it"
snap_img() {
  echo "$BLOCK/snapshots/$1.img"
}
for fstype in ext4 xfs; do
  size=$([[ $fstype == xfs ]] && echo 300M || echo 64M)
  src="s$fstype"
  check_ok "(h) docker volume create $src ($fstype, $size)" \
    dk volume create -d "$DRIVER" -o backend=block -o size="$size" -o fstype="$fstype" "$src"
  check_ok "(h) container w$fstype writes to $src without pause" \
    dk run -d --network none --name "w$fstype" -v "$src:/data" "$IMG" \
    sh -c 'echo base > /data/base; i=0; while true; do i=$((i+1)); echo "$i" >> /data/log; done'
  wait_until 10 test -s "$(block_mnt "$src")/log"
  check_ok "(h) berthctl snapshot create $src snap-$fstype while w$fstype writes" \
    ctl snapshot create "$src" "snap-$fstype"
  check_contains "(h) berthctl snapshot ls shows it" "snap-$fstype" "$(ctl snapshot ls "$src" 2>&1)"
  check "(h) docker volume ls does not list the snapshot" "" \
    "$(dk volume ls -q --filter "driver=$DRIVER" | grep -x "snap-$fstype" || true)"
  check_ok "(h) w$fstype still writes after the snapshot (its filesystem was thawed)" \
    dk exec "w$fstype" sh -c 'a=$(wc -l < /data/log); for i in $(seq 100); do
      test "$(wc -l < /data/log)" -gt "$a" && exit 0; sleep 0.1; done; exit 1'
  if [[ $fstype == ext4 ]]; then
    if e2fsck -fn "$(snap_img "snap-$fstype")" >"$E2E_TMP/fsck.out" 2>&1; then
      pass "(h) the ext4 snapshot checks clean (e2fsck -fn)"
    else
      fail "(h) the ext4 snapshot checks clean (e2fsck -fn)" "$(tail -5 "$E2E_TMP/fsck.out")"
    fi
  fi
  check_ok "(h) docker volume create r$fstype -o from-snapshot=snap-$fstype" \
    dk volume create -d "$DRIVER" -o from-snapshot="snap-$fstype" "r$fstype"
  # What the snapshot held: its base file, and a log whose last line is whole and whose
  # lines count 1..N without a gap, N being that last line.
  check "(h) r$fstype holds the base file" base "$(run_rm_block "r$fstype" 'cat /data/base')"
  check "(h) r$fstype's log is whole: lines 1..N, N its last line" yes \
    "$(run_rm_block "r$fstype" 'n=$(wc -l < /data/log); t=$(tail -n 1 /data/log); test "$n" -gt 0 && test "$n" = "$t" && echo yes || echo "no: $n lines, last $t"')"
  check_ok "(h) docker stop w$fstype" stop_rm "w$fstype"
  if [[ $fstype == xfs ]]; then
    # xfs keeps its log across a freeze: the volume's first mount replayed it.
    if xfs_repair -n "$(block_img "r$fstype")" >"$E2E_TMP/fsck.out" 2>&1; then
      pass "(h) the volume made of the xfs snapshot checks clean (xfs_repair -n)"
    else
      fail "(h) the volume made of the xfs snapshot checks clean (xfs_repair -n)" \
        "$(tail -5 "$E2E_TMP/fsck.out")"
    fi
  fi
done
check_ok "(h) docker volume create c1 -o clone-of=sext4 -o size=128M" \
  dk volume create -d "$DRIVER" -o clone-of=sext4 -o size=128M c1
check "(h) the clone holds its source's data" base "$(run_rm_block c1 'cat /data/base')"
c1_kib=$(dk run --rm --network none -v c1:/data "$IMG" df -k /data | awk 'NR == 2 { print $2 }')
check "(h) the clone has the larger size it asked for (more than 112 MiB)" yes \
  "$( ((c1_kib > 112 * 1024)) && echo yes || echo "no: $c1_kib KiB")"
check_fails "(h) a volume from a missing snapshot is refused" \
  dk volume create -d "$DRIVER" -o from-snapshot=ghost r0
check_contains "(h) the error names it" "no Docker snapshot ghost" "$LAST_OUTPUT"
check_fails "(h) a clone with its own fstype is refused" \
  dk volume create -d "$DRIVER" -o clone-of=sext4 -o fstype=xfs c2
check_contains "(h) the error says a copy keeps its source's filesystem" "a copy keeps its source" \
  "$LAST_OUTPUT"
check_ok "(h) the snapshot outlives its volume: docker volume rm sext4" dk volume rm sext4
check_ok "(h) a volume is made of it after that" \
  dk volume create -d "$DRIVER" -o from-snapshot=snap-ext4 r2
check_fails "(h) docker volume rm of a snapshot's name is refused" dk volume rm snap-ext4
check_ok "(h) berthctl snapshot rm snap-ext4 snap-xfs" ctl snapshot rm snap-ext4
check_ok "(h) berthctl snapshot rm snap-xfs" ctl snapshot rm snap-xfs
check "(h) the snapshots' images are gone" "absent absent" \
  "$(present "$(snap_img snap-ext4)") $(present "$(snap_img snap-xfs)")"
check_ok "(h) docker volume rm rext4 rxfs sxfs c1 r2" dk volume rm rext4 rxfs sxfs c1 r2

# -- (i) kill -9 at the new steps -------------------------------------------------------------
log "(i) berthd killed between a block volume's image (or a snapshot's copy) and its record"
CRASH_LABEL="(i)"
BERTHD_ARGS=("${USAGE_ARGS[@]}")
crash_during engine-before-persist "a Create" dk volume create -d "$DRIVER" -o backend=block -o size=32M k1
check "(i) the image of the Create that was never acknowledged is gone" absent \
  "$(present "$(block_img k1)")"
check_contains "(i) the crash had left it, and the start-up sweep deleted it" \
  "image sweep: deleted $(block_img k1)" "$(grep 'image sweep' "$BERTHD_LOG")"
check "(i) and k1 is no volume" "" "$(dk volume ls -q --filter "driver=$DRIVER" | grep -x k1 || true)"
check_ok "(i) docker volume create k1 again gets a fresh volume" \
  dk volume create -d "$DRIVER" -o backend=block -o size=64M k1
check "(i) of the size asked now" 67108864 "$(stat -c %s "$(block_img k1)" 2>&1)"
crash_during engine-before-persist "a snapshot" ctl snapshot create k1 k1-snap
check "(i) the snapshot's copy that was never acknowledged is gone" absent \
  "$(present "$BLOCK/snapshots/k1-snap.img")"
check_contains "(i) the crash had left it, and the start-up sweep deleted it" \
  "image sweep: deleted $BLOCK/snapshots/k1-snap.img" "$(grep 'image sweep' "$BERTHD_LOG")"
# Killed during a copy, while a container writes to the volume: the copy's temp file and the
# source's frozen filesystem are what the next start finds.
check_ok "(i) container wk1 writes to k1 without pause" \
  dk run -d --network none --name wk1 -v k1:/data "$IMG" \
  sh -c 'i=0; while true; do i=$((i+1)); echo "$i" > /data/count; done'
wait_until 10 test -s "$(block_mnt k1)/count"
crash_during block-copy-frozen "a snapshot's copy of k1 under wk1" ctl snapshot create k1 k1-mid
check_contains "(i) the start thawed k1's filesystem, which the crash left frozen" \
  "loop sweep: thawed the filesystem at $(block_mnt k1)" "$(grep 'loop sweep: thawed' "$BERTHD_LOG")"
if wait_until 10 file_changes "$(block_mnt k1)/count"; then
  pass "(i) wk1 writes again"
else
  fail "(i) wk1 writes again" "k1's count stays at $(cat "$(block_mnt k1)/count" 2>&1)"
fi
check "(i) the snapshot of the crashed copy does not exist" absent \
  "$(present "$BLOCK/snapshots/k1-mid.img")"
check "(i) nor does berthctl list it" "" "$(ctl snapshot ls k1 2>&1 | grep -w k1-mid || true)"
check_ok "(i) docker rm -f wk1" dk rm -f wk1
check "(i) no temp image is left" "" "$(ls -A "$BLOCK/volumes" "$BLOCK/snapshots" 2>/dev/null | grep '^\.' || true)"
check "(i) no loop device of berth's images is attached" "" \
  "$(losetup -l -n -O BACK-FILE 2>/dev/null | grep -F "$BLOCK/" || true)"
check_ok "(i) docker volume rm k1" dk volume rm k1

# -- (g) remove, and options refused --------------------------------------------------------
log "(g) remove and bad options"
check_fails "(g) -o size= on a directory volume is refused" dk volume create -d "$DRIVER" -o size=1G d1
check_contains "(g) the error names -o backend=block" "backend=block" "$LAST_OUTPUT"
check_fails "(g) -o backend=block without a size is refused" dk volume create -d "$DRIVER" -o backend=block b3
check_contains "(g) the error names the size option" "size" "$LAST_OUTPUT"
check_fails "(g) -o fstype=btrfs is refused" \
  dk volume create -d "$DRIVER" -o backend=block -o size=64M -o fstype=btrfs b3
check_contains "(g) the error names the filesystem" btrfs "$LAST_OUTPUT"
check "(g) nothing was made for b3" absent "$(present "$(block_img b3)")"
check_ok "(g) docker volume rm b1 b2" dk volume rm b1 b2
for v in b1 b2; do
  check "(g) $v's image is gone" absent "$(present "$(block_img "$v")")"
  check "(g) $v's mount dir is gone" absent "$(present "$(block_mnt "$v")")"
done
check "(g) no loop device of berth's images is left" "" \
  "$(losetup -l -n -O BACK-FILE 2>/dev/null | grep -F "$BLOCK/" || true)"
check "(g) no host mount left under the state dir" 0 \
  "$(awk -v d="$STATE/" 'index($5, d) == 1' /proc/self/mountinfo | wc -l)"

check_ok "berthd stops on SIGTERM" stop_berthd
e2e_finish
