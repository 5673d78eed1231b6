#!/usr/bin/env bash
# berthctl export and import against a real dockerd and real loop devices: a volume's files
# round-trip through a tar, what is refused leaves nothing, and a kill -9 leaves nothing.
#
#   usage: export_import_e2e.sh PATH/TO/berthd PATH/TO/berthctl
#
# (a) odd files (owners, modes, a hard link, a symlink, a fifo, a sparse file) exported from
#     a directory volume and imported into a directory and a block volume arrive whole
# (b) an export under a writing container says crash-consistent; an idle one says nothing
# (c) a tar with ../ or an absolute path, a tar too large for its size, a name taken, a
#     type= option: refused, and nothing is left (no volume, image, staging)
# (d) -o uid= -o gid= -o mode= set the imported root; a container as uid 1000 writes there
# (e) kill -9 during an import and during an export: the next start deletes what was left
# The wire and the rules: docs/running.md, "Export and import".
# Exit 77 (skipped, loudly) when root, docker.io, a working dockerd or loop devices are missing.

source "$(dirname "$0")/lib.sh"

e2e_init "${1:-}" "${2:-}"
need_cmd tar tar
need_cmd losetup mount
need_cmd mkfs.ext4 e2fsprogs
if ! losetup -f >/dev/null 2>&1; then
  skip "no free loop device (losetup -f failed): block volumes need /dev/loop*"
fi
start_dockerd_and_berthd

BLOCK="$STATE/block"
ctl() {
  "$BERTHCTL" --socket "$ADMIN_SOCK" "$@"
}
# nothing_left NAME: no volume NAME, no image of it, no staging or export copy.
nothing_left() {
  local left=""
  [[ -e "$STATE/volumes/$1" ]] && left+=" $STATE/volumes/$1"
  [[ -e "$BLOCK/volumes/$1.img" ]] && left+=" $BLOCK/volumes/$1.img"
  left+=$(ls -A "$STATE/imports" "$STATE/exports" "$BLOCK/exports" 2>/dev/null | grep -v -e ':$' -e '^$' | sed 's/^/ /' | tr -d '\n')
  ctl inspect "$1" >/dev/null 2>&1 && left+=" (a record)"
  echo "${left:-nothing}"
}

# -- (a) a round trip ----------------------------------------------------------------------------
log "(a) odd files through export and import"
check_ok "(a) docker volume create d1" dk volume create -d "$DRIVER" d1
check_ok "(a) a container fills d1 with odd files" \
  dk run --rm --network none -v d1:/data "$IMG" sh -c '
    echo hello > /data/file && chown 1000:1001 /data/file && chmod 640 /data/file &&
    ln /data/file /data/hard && ln -s file /data/link && mkfifo /data/fifo &&
    mkdir -p /data/dir/deep && echo x > /data/dir/deep/y && chmod 700 /data/dir &&
    chown 1000:1000 /data/dir && dd if=/dev/zero of=/data/sparse bs=1 count=1 seek=67108863 2>/dev/null'
check_ok "(a) berthctl export d1 > d1.tar" sh -c "'$BERTHCTL' --socket '$ADMIN_SOCK' export d1 > '$E2E_TMP/d1.tar' 2>'$E2E_TMP/d1.err'"
check "(a) an idle volume's export says nothing on stderr" "" "$(cat "$E2E_TMP/d1.err")"
listing=$(tar -tvf "$E2E_TMP/d1.tar" --numeric-owner 2>&1)
check_contains "(a) the tar keeps file's owner" "1000/1001" "$listing"
check_contains "(a) the hard link" "./hard link to ./file" "$listing"
check_contains "(a) the symlink" "./link -> file" "$listing"
check_contains "(a) the fifo" "prw-r--r--" "$listing"
check "(a) the sparse file is sparse in the tar (KiB)" yes \
  "$( (($(stat -c %s "$E2E_TMP/d1.tar") < 1048576)) && echo yes || echo no)"
check_ok "(a) berthctl import d2 < d1.tar" sh -c "'$BERTHCTL' --socket '$ADMIN_SOCK' import d2 < '$E2E_TMP/d1.tar'"
check "(a) d2 holds d1's tree" "$(tree_of "$(data_of d1)")" "$(tree_of "$(data_of d2)")"
check "(a) and d2's sparse file is sparse on disk" yes \
  "$( (($(du -k "$(data_of d2)/sparse" | cut -f1) < 1024)) && echo yes || echo no)"
check_ok "(a) berthctl import b1 -o backend=block -o size=64M < d1.tar" \
  sh -c "'$BERTHCTL' --socket '$ADMIN_SOCK' import b1 -o backend=block -o size=64M < '$E2E_TMP/d1.tar'"
check_ok "(a) container rb1 holds b1" \
  dk run -d --network none --name rb1 -v b1:/data "$IMG" sleep 600
check "(a) b1 holds d1's tree (on its own filesystem)" "$(tree_of "$(data_of d1)" across)" \
  "$(tree_of "$BLOCK/mounts/b1" across)"
check "(a) a container reads b1 through the hard link and the symlink" "hello hello" \
  "$(dk exec rb1 sh -c 'echo $(cat /data/hard) $(cat /data/link)' 2>&1)"
check_ok "(a) berthctl export b1 (mounted: its filesystem frozen for the copy)" \
  sh -c "'$BERTHCTL' --socket '$ADMIN_SOCK' export b1 > '$E2E_TMP/b1.tar' 2>'$E2E_TMP/b1.err'"
check "(a) a frozen copy is consistent: nothing on stderr" "" "$(cat "$E2E_TMP/b1.err")"
check_contains "(a) b1's tar holds the file" "./file" "$(tar -tf "$E2E_TMP/b1.tar" 2>&1)"
check_ok "(a) docker rm -f rb1" dk rm -f rb1
check "(a) the exports left nothing" nothing "$(nothing_left none)"

# -- (b) an export under a writer ----------------------------------------------------------------
log "(b) an export of a volume a container writes to"
check_ok "(b) container w1 writes to d1 without pause" \
  dk run -d --network none --name w1 -v d1:/data "$IMG" \
  sh -c 'i=0; while true; do i=$((i+1)); echo "$i" > /data/count; done'
wait_until 10 test -s "$(data_of d1)/count"
check_ok "(b) berthctl export d1 while w1 writes" \
  sh -c "'$BERTHCTL' --socket '$ADMIN_SOCK' export d1 > '$E2E_TMP/busy.tar' 2>'$E2E_TMP/busy.err'"
check_contains "(b) it says the tar is crash-consistent only" "crash-consistent only" \
  "$(cat "$E2E_TMP/busy.err")"
check_contains "(b) the tar holds the count file" "./count" "$(tar -tf "$E2E_TMP/busy.tar" 2>&1)"
check_ok "(b) docker rm -f w1" dk rm -f w1

# -- (c) refusals ---------------------------------------------------------------------------------
log "(c) what is refused leaves nothing"
python3 - "$E2E_TMP" <<'PY'
import io, sys, tarfile
tmp = sys.argv[1]
def member(t, name, data=b"x"):
    info = tarfile.TarInfo(name)
    info.size = len(data)
    t.addfile(info, io.BytesIO(data))
with tarfile.open(tmp + "/dotdot.tar", "w") as t:
    member(t, "ok.txt")
    member(t, "../escape.txt")
with tarfile.open(tmp + "/absolute.tar", "w") as t:
    member(t, "/etc/berth-e2e-escape.txt")
with tarfile.open(tmp + "/symlink.tar", "w") as t:
    info = tarfile.TarInfo("out")
    info.type = tarfile.SYMTYPE
    info.linkname = tmp
    t.addfile(info)
    member(t, "out/through-the-link.txt")
PY
for bad in dotdot absolute symlink; do
  check_fails "(c) berthctl import x-$bad < $bad.tar is refused" \
    sh -c "'$BERTHCTL' --socket '$ADMIN_SOCK' import x-$bad < '$E2E_TMP/$bad.tar'"
  check_contains "(c) the error says the tar was refused" "the tar was refused" "$LAST_OUTPUT"
  check "(c) and nothing is left of x-$bad" nothing "$(nothing_left "x-$bad")"
done
check "(c) nothing escaped" "absent absent" \
  "$( [[ -e "$STATE/escape.txt" || -e "$STATE/imports/escape.txt" ]] && echo present || echo absent) $( [[ -e "$E2E_TMP/through-the-link.txt" ]] && echo present || echo absent)"
head -c 40000000 /dev/urandom > "$(data_of d2)/big"
check_ok "(c) berthctl export d2 (with a 40 MB file)" \
  sh -c "'$BERTHCTL' --socket '$ADMIN_SOCK' export d2 > '$E2E_TMP/big.tar'"
check_fails "(c) berthctl import x-big -o backend=block -o size=16M < big.tar is refused" \
  sh -c "'$BERTHCTL' --socket '$ADMIN_SOCK' import x-big -o backend=block -o size=16M < '$E2E_TMP/big.tar'"
check_contains "(c) the error says it does not fit" "does not fit" "$LAST_OUTPUT"
check "(c) and nothing is left of x-big" nothing "$(nothing_left x-big)"
check "(c) no loop device backs an image of x-big" "" \
  "$(losetup -l -n -O BACK-FILE 2>/dev/null | grep -F "$BLOCK/volumes/x-big" || true)"
check_fails "(c) an import under a taken name is refused" \
  sh -c "'$BERTHCTL' --socket '$ADMIN_SOCK' import d2 < '$E2E_TMP/d1.tar'"
check_contains "(c) naming it" "volume d2 exists already" "$LAST_OUTPUT"
check_fails "(c) an import with -o type=tmpfs is refused" \
  sh -c "'$BERTHCTL' --socket '$ADMIN_SOCK' import x-t -o type=tmpfs < '$E2E_TMP/d1.tar'"
check_fails "(c) an export of a volume that is not there is refused" \
  sh -c "'$BERTHCTL' --socket '$ADMIN_SOCK' export ghost > '$E2E_TMP/ghost.tar'"
check_contains "(c) naming it" "no such volume: ghost" "$LAST_OUTPUT"

# -- (d) ownership at import ----------------------------------------------------------------------
log "(d) -o uid -o gid -o mode set the imported root"
check_ok "(d) berthctl import o1 -o uid=1000 -o gid=1000 -o mode=0750 < d1.tar" \
  sh -c "'$BERTHCTL' --socket '$ADMIN_SOCK' import o1 -o uid=1000 -o gid=1000 -o mode=0750 < '$E2E_TMP/d1.tar'"
check "(d) o1's root is 1000 1000 750" "1000 1000 750" "$(stat -c '%u %g %a' "$(data_of o1)")"
check_ok "(d) a container as uid 1000 writes to o1's root" \
  dk run --rm --network none --user 1000:1000 -v o1:/data "$IMG" sh -c 'echo mine > /data/new'

# -- (e) kill -9 ----------------------------------------------------------------------------------
log "(e) berthd killed during an import and during an export"
CRASH_LABEL="(e)"
BERTHD_ARGS=()
crash_during import-extracted "an import of d1.tar" \
  sh -c "'$BERTHCTL' --socket '$ADMIN_SOCK' import k1 < '$E2E_TMP/d1.tar'"
check_contains "(e) the start deleted the import's staging" "transfer sweep: deleted $STATE/imports/" \
  "$(grep 'transfer sweep' "$BERTHD_LOG")"
check "(e) and nothing is left of k1" nothing "$(nothing_left k1)"
crash_during export-streaming "an export of b1" \
  sh -c "'$BERTHCTL' --socket '$ADMIN_SOCK' export b1 > '$E2E_TMP/cut.tar'"
check "(e) the export's copy is gone" nothing "$(nothing_left none)"
check "(e) no loop device backs an export's copy" "" \
  "$(losetup -l -n -O BACK-FILE 2>/dev/null | grep -F "$BLOCK/exports" || true)"
check_fails "(e) the cut tar is no whole tar" tar -tf "$E2E_TMP/cut.tar"
check_ok "(e) docker volume rm d1 d2 b1 o1" dk volume rm d1 d2 b1 o1

e2e_finish
