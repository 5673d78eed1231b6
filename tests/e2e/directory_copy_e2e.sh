#!/usr/bin/env bash
# Snapshots and clones of plain directory volumes against a real dockerd: what a copy keeps,
# what it says of its consistency, and what a crash during one leaves.
#
#   usage: directory_copy_e2e.sh PATH/TO/berthd PATH/TO/berthctl
#
# (a) a snapshot of a volume no container uses: every kind of file survives into a volume made
#     of it (owners, modes, hard links, a symlink, a fifo, a sparse file), and it is consistent
# (b) a snapshot of a volume a running container writes to says crash-consistent, and a
#     volume made of it holds what the container had written
# (c) a clone; the snapshot outlives its volume; snapshot rm deletes its copy
# (d) what cannot be copied is refused, naming what to use, and leaves nothing
# (e) kill -9 during a copy, and between a copy and its record: the start deletes what was left
# What consistent means: docs/running.md, "What consistent means".
# Exit 77 (skipped, loudly) when root, docker.io or a working dockerd is missing.

source "$(dirname "$0")/lib.sh"

e2e_init "${1:-}" "${2:-}"
need_cmd cp coreutils
start_dockerd_and_berthd

ctl() {
  "$BERTHCTL" --socket "$ADMIN_SOCK" "$@"
}
snap_data() {
  echo "$STATE/snapshots/$1/data"
}
# consistency_of SNAPSHOT: the CONSISTENCY column of berthctl snapshot ls.
consistency_of() {
  ctl snapshot ls 2>&1 | awk -v s="$1" '$1 == s { print $5 }'
}

# -- (a) a snapshot of an idle volume ------------------------------------------------------------
log "(a) a snapshot of a volume no container uses keeps every kind of file"
check_ok "(a) docker volume create d1" dk volume create -d "$DRIVER" d1
check_ok "(a) a container fills d1 with odd files, as uid 1000 where it may" \
  dk run --rm --network none -v d1:/data "$IMG" sh -c '
    echo hello > /data/file && chown 1000:1001 /data/file && chmod 640 /data/file &&
    ln /data/file /data/hard && ln -s file /data/link && mkfifo /data/fifo &&
    mkdir -p /data/dir/deep && echo x > /data/dir/deep/y && chmod 700 /data/dir &&
    dd if=/dev/zero of=/data/sparse bs=1 count=1 seek=67108863 2>/dev/null'
check_ok "(a) berthctl snapshot create d1 s1" ctl snapshot create d1 s1
check "(a) berthctl snapshot ls says s1 is consistent" consistent "$(consistency_of s1)"
check_ok "(a) docker volume create r1 -o from-snapshot=s1" \
  dk volume create -d "$DRIVER" -o from-snapshot=s1 r1
check "(a) r1 holds d1's tree: owners, modes, links, sizes and content" \
  "$(tree_of "$(data_of d1)")" "$(tree_of "$(data_of r1)")"
check "(a) the sparse file stays sparse (KiB it takes)" yes \
  "$( (($(du -k "$(data_of r1)/sparse" | cut -f1) < 1024)) && echo yes || echo no)"
check "(a) a container reads r1 through the hard link and the symlink" "hello hello" \
  "$(dk run --rm --network none -v r1:/data "$IMG" sh -c 'echo $(cat /data/hard) $(cat /data/link)' 2>&1)"
check "(a) the fifo is a fifo" p "$(stat -c %F "$(data_of r1)/fifo" | cut -c1 | tr f p)"

# -- (b) a snapshot under a writer ---------------------------------------------------------------
log "(b) a snapshot of a volume a running container writes to"
check_ok "(b) container w1 writes to d1 without pause" \
  dk run -d --network none --name w1 -v d1:/data "$IMG" \
  sh -c 'echo base > /data/base; i=0; while true; do i=$((i+1)); echo "$i" > /data/count; done'
wait_until 10 test -s "$(data_of d1)/count"
check_ok "(b) berthctl snapshot create d1 s2 while w1 writes" ctl snapshot create d1 s2
check "(b) berthctl snapshot ls says s2 is crash-consistent" crash-consistent "$(consistency_of s2)"
check_contains "(b) berthctl inspect s2 says so too" "copied from:   volume:d1 (crash-consistent)" \
  "$(ctl inspect s2 2>&1)"
check_ok "(b) docker volume create r2 -o from-snapshot=s2" \
  dk volume create -d "$DRIVER" -o from-snapshot=s2 r2
check "(b) r2 holds the base file w1 wrote" base "$(cat "$(data_of r2)/base" 2>&1)"
# Copied while w1 rewrote it: a count, or the empty file between a truncate and its write.
check "(b) and a count file as w1 left it at some moment of the copy" yes \
  "$([[ "$(cat "$(data_of r2)/count" 2>&1)" =~ ^[0-9]*$ ]] && echo yes || echo no)"
if wait_until 10 file_changes "$(data_of d1)/count"; then
  pass "(b) w1 goes on writing after the snapshot"
else
  fail "(b) w1 goes on writing after the snapshot" "d1's count stays at $(cat "$(data_of d1)/count" 2>&1)"
fi
check_ok "(b) docker rm -f w1" dk rm -f w1

# -- (c) a clone, and a snapshot that outlives its volume ----------------------------------------
log "(c) a clone; a snapshot outlives its volume"
check_ok "(c) docker volume create c1 -o clone-of=d1" dk volume create -d "$DRIVER" -o clone-of=d1 c1
check "(c) c1 holds d1's tree" "$(tree_of "$(data_of d1)")" "$(tree_of "$(data_of c1)")"
check_contains "(c) berthctl inspect c1 names its source" "copied from:   volume:d1 (consistent)" \
  "$(ctl inspect c1 2>&1)"
check_fails "(c) docker volume create c2 -o clone-of=d1 -o uid=1000 is refused" \
  dk volume create -d "$DRIVER" -o clone-of=d1 -o uid=1000 c2
check_contains "(c) the error says a copy keeps its source's owner" "keeps its source's owner" \
  "$LAST_OUTPUT"
check_ok "(c) docker volume rm d1 (its snapshots stay)" dk volume rm d1
check "(c) s1 still holds d1's file" hello "$(cat "$(snap_data s1)/file" 2>&1)"
check_ok "(c) docker volume create r3 -o from-snapshot=s1 after d1 is gone" \
  dk volume create -d "$DRIVER" -o from-snapshot=s1 r3
check_ok "(c) berthctl snapshot rm s1" ctl snapshot rm s1
check "(c) its copy is gone" absent "$(present "$STATE/snapshots/s1")"
check "(c) docker volume ls does not list snapshots" "" \
  "$(dk volume ls -q --filter "driver=$DRIVER" | grep -x 's[12]' || true)"

# -- (d) refusals -------------------------------------------------------------------------------
log "(d) what cannot be copied is refused"
check_ok "(d) docker volume create t1 -o type=tmpfs -o device=tmpfs" \
  dk volume create -d "$DRIVER" -o type=tmpfs -o device=tmpfs t1
check_fails "(d) berthctl snapshot create t1 st is refused" ctl snapshot create t1 st
check_contains "(d) the error says what can be copied" "-o backend=block" "$LAST_OUTPUT"
check_fails "(d) docker volume create ct -o clone-of=t1 is refused" \
  dk volume create -d "$DRIVER" -o clone-of=t1 ct
check_contains "(d) naming t1" "volume t1 is not a plain directory volume" "$LAST_OUTPUT"
check "(d) neither left anything" "absent absent" \
  "$(present "$STATE/snapshots/st") $(present "$STATE/volumes/ct")"
check_fails "(d) a clone with a type is refused" \
  dk volume create -d "$DRIVER" -o clone-of=c1 -o type=tmpfs ct
check_ok "(d) docker volume rm t1" dk volume rm t1

# -- (e) kill -9 during a copy --------------------------------------------------------------------
log "(e) berthd killed during a copy, and between a copy and its record"
CRASH_LABEL="(e)"
BERTHD_ARGS=()
crash_during dir-copy-made "a snapshot's copy of c1" ctl snapshot create c1 k1
check_contains "(e) the start deleted the temp copy" "copy sweep: deleted $STATE/snapshots/.k1.tmp." \
  "$(grep 'copy sweep' "$BERTHD_LOG")"
check "(e) berthctl lists no k1" "" "$(ctl snapshot ls 2>&1 | awk '$1 == "k1"')"
crash_during engine-before-persist "a clone of c1" dk volume create -d "$DRIVER" -o clone-of=c1 k2
check "(e) the clone that was never acknowledged is gone" absent "$(present "$STATE/volumes/k2")"
check_contains "(e) the start-up sweep deleted it" "copy sweep: deleted $STATE/volumes/k2" \
  "$(grep 'copy sweep' "$BERTHD_LOG")"
check_ok "(e) docker volume create k2 again gets a fresh, empty volume" \
  dk volume create -d "$DRIVER" k2
check "(e) empty" "" "$(ls -A "$(data_of k2)" 2>&1)"
check "(e) no temp copy is left" "" \
  "$(ls -A "$STATE/volumes" "$STATE/snapshots" 2>/dev/null | grep '^\.' || true)"
check_ok "(e) docker volume rm c1 k2 r1 r2 r3" dk volume rm c1 k2 r1 r2 r3
check_ok "(e) berthctl snapshot rm s2" ctl snapshot rm s2
check "(e) nothing is left under volumes/ and snapshots/" "" \
  "$(ls -A "$STATE/volumes" "$STATE/snapshots" 2>/dev/null | grep -v ':$' | grep . || true)"

e2e_finish
