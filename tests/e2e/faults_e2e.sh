#!/usr/bin/env bash
# Fault injection end to end: the real berthd, driven on its Docker plugin socket
# with curl (no dockerd needed). Each section uses a fresh state directory.
#
#   usage: faults_e2e.sh PATH/TO/berthd PATH/TO/berthctl
#
# (a)  the state directory's state/ folder removed, then Mount: Err, no mount left
# (a2) the state filesystem full (no journal reserve), then Mount: Err, rolled back; works
#      again once freed
# (b)  a crash between mount(2) and the commit (a stray bind mount) is undone at start;
#      kill -9 with mounts held by IDs keeps the counts and the mounts; a vanished
#      mount is remade at start (same boot)
# (c)  a torn journal tail (a cut record, random bytes) is dropped; later writes survive
# (d)  malformed requests: Err replies, nothing created, berthd keeps serving
# (e)  --import-ecs-state: amazon-ecs-volume-plugin's state, null count -> 1
# (a), (a2), (b), (c): docs/design.md, "All or nothing, across crashes"; (e): docs/design.md,
# "Old state files load".
# Exit 77 (skipped, loudly) when not root.

source "$(dirname "$0")/lib.sh"

e2e_init "${1:-}" "${2:-}"

# new_state SECTION: a fresh state dir for SECTION, berthd started on it.
new_state() {
  STATE="$E2E_TMP/state-$1"
  if start_berthd "$STATE" "$PLUGIN_SOCK" "$ADMIN_SOCK" "${@:2}"; then
    pass "($1) berthd starts on a fresh state dir"
    return 0
  fi
  fail "($1) berthd starts on a fresh state dir" "see the log above"
  return 1
}

# start_again WHAT: start berthd on $STATE, recording a check.
start_again() {
  if start_berthd "$STATE" "$PLUGIN_SOCK" "$ADMIN_SOCK" "${@:2}"; then
    pass "$1"
    return 0
  fi
  fail "$1" "see the log above"
  return 1
}

# raw_post ENDPOINT FILE: POSTs FILE; prints "HTTP_STATUS BODY" ("000 ..." on no reply).
raw_post() {
  curl -s --max-time 30 --unix-socket "$PLUGIN_SOCK" -o "$E2E_TMP/reply" -w '%{http_code}' \
    -H 'Content-Type: application/vnd.docker.plugins.v1+json' \
    -X POST --data-binary "@$2" "http://localhost/$1" 2>/dev/null
  echo " $(head -c 300 "$E2E_TMP/reply" 2>/dev/null)"
  rm -f "$E2E_TMP/reply"
}

# check_refused WHAT ENDPOINT BODY: the reply carries a non-empty Err (or a 4xx/5xx).
check_refused() {
  local what="$1" file="$E2E_TMP/body" out code body err
  printf '%s' "$3" >"$file"
  out=$(raw_post "$2" "$file")
  code=${out%% *}
  body=${out#* }
  err=$(json_get "$body" 'd.get("Err", "") if isinstance(d, dict) else ""' 2>/dev/null)
  if [[ -n "$err" ]]; then
    pass "$what: Err '$err' (HTTP $code)"
  elif [[ "$code" =~ ^[45] ]]; then
    fail "$what" "expected a JSON reply with a non-empty Err" "got HTTP $code without Err: '$body'"
  else
    fail "$what" "expected a non-empty Err" "got HTTP $code: '$body'"
  fi
  LAST_OUTPUT="$err"
}

state_entries() {
  ls -A "$STATE/volumes" 2>/dev/null | sort | tr '\n' ' ' | sed 's/ $//'
}

# -- (a) the state folder removed under a running berthd -------------------------------------
log "(a) rm -rf STATE/state, then Mount"
if new_state a; then
  check "(a) Create fa1" "" "$(create_vol fa1)"
  check "(a) Mount fa1 before the fault works" "" "$(mount_id fa1 before)"
  check "(a) Unmount fa1 before the fault works" "" "$(unmount_id fa1 before)"
  if [[ -d "$STATE/state" ]]; then
    pass "(a) STATE/state exists ($(ls "$STATE/state" | tr '\n' ' '))"
  else
    fail "(a) STATE/state exists" "expected the durable state in $STATE/state" "got: $(ls -A "$STATE")"
  fi
  rm -rf "$STATE/state"
  err=$(mount_id fa1 x1)
  check_nonempty "(a) Mount after state/ was removed returns an Err" "$err"
  check "(a) no mount of fa1 left in /proc/self/mountinfo (rolled back)" 0 "$(mount_count "$(vol_mnt fa1)")"
  check "(a) berthctl: fa1 holds no mount ID (rolled back)" 0 "$(ctl_total fa1)"
  check "(a) berthctl: fa1 not mounted" false "$(ctl_mounted fa1)"
  if berthd_answers "$PLUGIN_SOCK"; then
    pass "(a) berthd still answers after the failed persist"
  else
    fail "(a) berthd still answers after the failed persist" "Plugin.Activate answers" "no answer"
  fi
  check_ok "(a) berthd stops cleanly on SIGTERM after the fault" stop_berthd
  kill9_berthd
fi
umount_under "$STATE"

# -- (a2) the state filesystem is full -----------------------------------------------------------
log "(a2) ENOSPC on the state filesystem, then Mount"
STATE="$E2E_TMP/state-a2"
mkdir -p "$STATE/state"
if ! mount -t tmpfs -o size=2m tmpfs "$STATE/state"; then
  fail "(a2) mount a 2 MiB tmpfs as STATE/state" "mount succeeds" "it failed"
elif start_again "(a2) berthd starts with STATE/state on a small tmpfs (no journal reserve)" \
  --journal-reserve-mb 0; then
  # Without the reserve a full disk fails transitions, which must roll back; with it they
  # go on (full_disk_e2e.sh) until the reserve is used up, and then fail the same way.
  for i in 1 2 3 4 5 6 7 8; do
    create_vol "fs$i" >/dev/null
  done
  check "(a2) 8 volumes created" "fs1 fs2 fs3 fs4 fs5 fs6 fs7 fs8" "$(listed)"
  dd if=/dev/zero of="$STATE/state/filler" bs=4k >/dev/null 2>&1
  failed_at=""
  for attempt in $(seq 1 200); do
    v="fs$(((attempt % 8) + 1))"
    err=$(mount_id "$v" "full-$attempt")
    if [[ -n "$err" ]]; then
      failed_at="$v full-$attempt"
      break
    fi
    err=$(unmount_id "$v" "full-$attempt")
    if [[ -n "$err" ]]; then
      # An Unmount whose record cannot be written fails too; that is fine, but it must
      # leave the volume as it was: mounted by that ID.
      failed_at="$v unmount"
      break
    fi
  done
  if [[ -z "$failed_at" ]]; then
    fail "(a2) Mount fails with the state filesystem full" "an Err within 200 Mount/Unmount pairs" "none failed"
  else
    # shellcheck disable=SC2086
    set -- $failed_at
    pass "(a2) a transition fails with the state filesystem full ($failed_at: $err)"
    if [[ "$2" == unmount ]]; then
      check "(a2) the failed Unmount left $1 mounted" 1 "$(mount_count "$(vol_mnt "$1")")"
      check "(a2) berthctl: the failed Unmount left the ID counted" 1 "$(ctl_total "$1")"
    else
      check "(a2) no mount of $1 left after the failed Mount" 0 "$(mount_count "$(vol_mnt "$1")")"
      check "(a2) berthctl: the failed Mount left no ID" 0 "$(ctl_total "$1")"
    fi
    rm -f "$STATE/state/filler"
    check "(a2) Mount works again once space is freed" "" "$(mount_id fs1 after-free)"
    check "(a2) fs1 mounted" 1 "$(mount_count "$(vol_mnt fs1)")"
    check "(a2) Unmount works again" "" "$(unmount_id fs1 after-free)"
    if [[ "$2" == unmount ]]; then
      unmount_id "$1" "${failed_at#* }" >/dev/null
    fi
  fi
  check_ok "(a2) berthd stops cleanly on SIGTERM after the fault" stop_berthd
  kill9_berthd
fi
umount_under "$STATE"

# -- (b) crashes between a side effect and its commit --------------------------------------------
log "(b) stray mount left by a crash is reconciled at start"
if new_state b; then
  check "(b) Create fb" "" "$(create_vol fb)"
  check_ok "(b) berthd stops (SIGTERM)" stop_berthd
  mount --bind "$STATE/volumes/fb/data" "$(vol_mnt fb)"
  check "(b) a stray bind mount made by hand (state says unmounted)" 1 "$(mount_count "$(vol_mnt fb)")"
  start_again "(b) berthd starts over the stray mount"
  # Each volume reconciles in its own actor once berthd serves: wait for it.
  check_unmounted "(b) the stray mount is gone after start (reconciled)" fb
  check "(b) Mount fb works" "" "$(mount_id fb m1)"
  check "(b) exactly one mount of fb" 1 "$(mount_count "$(vol_mnt fb)")"
  check "(b) Unmount fb works" "" "$(unmount_id fb m1)"
  check "(b) fb unmounted" 0 "$(mount_count "$(vol_mnt fb)")"

  log "(b) kill -9 while volumes are mounted by IDs"
  check "(b) Create fk1" "" "$(create_vol fk1)"
  check "(b) Create fk2" "" "$(create_vol fk2)"
  check "(b) Mount fk1 a" "" "$(mount_id fk1 a)"
  check "(b) Mount fk1 b" "" "$(mount_id fk1 b)"
  check "(b) Mount fk2 c" "" "$(mount_id fk2 c)"
  check "(b) Mount fk2 c again (docker cp style)" "" "$(mount_id fk2 c)"
  check "(b) berthctl: fk2 counts c=2" "c=2" "$(ctl_mounts fk2)"
  kill9_berthd
  check "(b) fk1 still mounted after kill -9" 1 "$(mount_count "$(vol_mnt fk1)")"
  start_again "(b) berthd starts after kill -9"
  check "(b) berthctl: fk1 counts kept" "a=1 b=1" "$(ctl_mounts fk1)"
  check "(b) berthctl: fk2 counts kept" "c=2" "$(ctl_mounts fk2)"
  check "(b) fk1 still mounted once" 1 "$(mount_count "$(vol_mnt fk1)")"
  check "(b) fk2 still mounted once" 1 "$(mount_count "$(vol_mnt fk2)")"
  check "(b) Unmount fk1 a" "" "$(unmount_id fk1 a)"
  check "(b) fk1 still mounted (b holds it)" 1 "$(mount_count "$(vol_mnt fk1)")"
  check "(b) Unmount fk1 b" "" "$(unmount_id fk1 b)"
  check "(b) fk1 unmounted after its last ID" 0 "$(mount_count "$(vol_mnt fk1)")"
  check "(b) Unmount fk2 c (1 of 2)" "" "$(unmount_id fk2 c)"
  check "(b) fk2 still mounted (c counted twice)" 1 "$(mount_count "$(vol_mnt fk2)")"
  check "(b) Unmount fk2 c (2 of 2)" "" "$(unmount_id fk2 c)"
  check "(b) fk2 unmounted" 0 "$(mount_count "$(vol_mnt fk2)")"
  check "(b) Unmount of an unknown ID is a no-op" "" "$(unmount_id fk2 never-mounted)"

  log "(b) a mount that vanished while berthd was down is remade (same boot)"
  check "(b) Mount fk1 d" "" "$(mount_id fk1 d)"
  echo marker >"$(vol_mnt fk1)/marker"
  check_ok "(b) berthd stops (SIGTERM)" stop_berthd
  umount "$(vol_mnt fk1)"
  check "(b) fk1's mount removed by hand" 0 "$(mount_count "$(vol_mnt fk1)")"
  start_again "(b) berthd starts with fk1's mount missing"
  check_mounted "(b) fk1 mounted again after start (its actor reconciles)" fk1
  check "(b) fk1 mounted again exactly once" 1 "$(mount_count "$(vol_mnt fk1)")"
  check "(b) the remade mount shows fk1's data" marker "$(cat "$(vol_mnt fk1)/marker" 2>&1)"
  check "(b) Unmount fk1 d" "" "$(unmount_id fk1 d)"
  check "(b) fk1 unmounted" 0 "$(mount_count "$(vol_mnt fk1)")"
  check_ok "(b) berthd stops cleanly on SIGTERM after the fault" stop_berthd
fi
umount_under "$STATE"

# -- (c) a torn journal tail ------------------------------------------------------------------
log "(c) torn tail of STATE/state/journal.log"
if new_state c; then
  for v in t1 t2 t3; do
    check "(c) Create $v" "" "$(create_vol "$v")"
  done
  check "(c) Mount t2 z" "" "$(mount_id t2 z)"
  kill9_berthd
  journal="$STATE/state/journal.log"
  if [[ -f "$journal" ]]; then
    pass "(c) $journal exists ($(stat -c %s "$journal") bytes)"
  else
    fail "(c) $journal exists" "the journal file" "got: $(ls -A "$STATE/state" 2>&1)"
  fi
  size=$(stat -c %s "$journal" 2>/dev/null || echo 0)
  # A record cut short: the start of a real record (its length and checksum are valid).
  head -c "$(((size > 24) ? 24 : size))" "$journal" >"$E2E_TMP/cut-record"
  cat "$E2E_TMP/cut-record" >>"$journal"
  start_again "(c) berthd starts over a cut-off last record"
  check "(c) every committed volume is served" "t1 t2 t3" "$(listed)"
  check "(c) berthctl: t2's mount ID kept" "z=1" "$(ctl_mounts t2)"
  check "(c) Create t4 after the torn tail" "" "$(create_vol t4)"
  kill9_berthd
  head -c 300 /dev/urandom >>"$journal"
  start_again "(c) berthd starts over random bytes at the tail"
  check "(c) every committed volume is served, t4 too (written after the first torn tail)" \
    "t1 t2 t3 t4" "$(listed)"
  check "(c) Create t5 after the second torn tail" "" "$(create_vol t5)"
  check_ok "(c) berthd stops (SIGTERM)" stop_berthd
  start_again "(c) berthd starts again"
  check "(c) t5 survived (new records are not lost behind the garbage)" "t1 t2 t3 t4 t5" "$(listed)"
  check "(c) Unmount t2 z" "" "$(unmount_id t2 z)"
  check "(c) t2 unmounted" 0 "$(mount_count "$(vol_mnt t2)")"
  check_ok "(c) berthd stops cleanly on SIGTERM after the fault" stop_berthd
fi
umount_under "$STATE"

# -- (d) malformed requests ------------------------------------------------------------------
log "(d) malformed requests"
if new_state d; then
  check "(d) Create dm (a good volume)" "" "$(create_vol dm)"
  check_refused "(d) Create with a body that is not JSON" VolumeDriver.Create 'this is {not json'
  check_refused "(d) Create with a JSON array" VolumeDriver.Create '[1,2,3]'
  check_refused "(d) Create without Name" VolumeDriver.Create '{"Opts":{}}'
  check_contains "(d) the Err names the missing field" name "$LAST_OUTPUT"
  check_refused "(d) Create with a numeric Name" VolumeDriver.Create '{"Name":5}'
  check_refused "(d) Create with an empty Name" VolumeDriver.Create '{"Name":""}'
  check_refused "(d) Create named ../etc" VolumeDriver.Create '{"Name":"../etc"}'
  check_refused "(d) Create named a/b" VolumeDriver.Create '{"Name":"a/b"}'
  check_refused "(d) Create named .." VolumeDriver.Create '{"Name":".."}'
  check_refused "(d) Create with a 200-character name" VolumeDriver.Create \
    "{\"Name\":\"$(printf 'x%.0s' $(seq 1 200))\"}"
  check_refused "(d) Create with an unknown option" VolumeDriver.Create '{"Name":"dopt","Opts":{"bogus":"1"}}'
  check_contains "(d) the Err names the option" bogus "$LAST_OUTPUT"
  check_refused "(d) Create with o but no type/device" VolumeDriver.Create '{"Name":"dopt","Opts":{"o":"size=1m"}}'
  check_refused "(d) Create with Opts not an object" VolumeDriver.Create '{"Name":"dopt","Opts":"x"}'
  check_refused "(d) Mount without ID" VolumeDriver.Mount '{"Name":"dm"}'
  check_refused "(d) Mount with an empty ID" VolumeDriver.Mount '{"Name":"dm","ID":""}'
  check_refused "(d) Mount with a control character in the ID" VolumeDriver.Mount '{"Name":"dm","ID":"a\u0001b"}'
  check_refused "(d) Mount of a volume that does not exist" VolumeDriver.Mount '{"Name":"nosuch","ID":"x"}'
  check_refused "(d) Mount named ../etc" VolumeDriver.Mount '{"Name":"../etc","ID":"x"}'
  check_refused "(d) Remove named ../../tmp" VolumeDriver.Remove '{"Name":"../../tmp"}'
  check_refused "(d) Path without Name" VolumeDriver.Path '{}'
  check_refused "(d) Get of a volume that does not exist" VolumeDriver.Get '{"Name":"nosuch"}'
  check_refused "(d) an unknown endpoint" VolumeDriver.Bogus '{"Name":"dm"}'
  python3 -c 'import sys; sys.stdout.write("{\"Name\":\"big\",\"Opts\":{\"type\":\"" + "A" * (16 << 20) + "\"}}")' \
    >"$E2E_TMP/huge.json"
  out=$(raw_post VolumeDriver.Create "$E2E_TMP/huge.json")
  code=${out%% *}
  if [[ "$code" == 000 || "$code" =~ ^[45] || "$out" == *'"Err":"'[^\"]* ]]; then
    pass "(d) a 16 MiB body is refused (HTTP $code: ${out#* })"
  else
    fail "(d) a 16 MiB body is refused" "an Err, a 4xx/5xx or a closed connection" "HTTP $code: ${out#* }"
  fi
  rm -f "$E2E_TMP/huge.json"
  if berthd_answers "$PLUGIN_SOCK"; then
    pass "(d) berthd still answers after the malformed requests"
  else
    fail "(d) berthd still answers after the malformed requests" "Plugin.Activate answers" "no answer"
  fi
  check "(d) only dm exists under STATE/volumes" dm "$(state_entries)"
  check "(d) List shows only dm" dm "$(listed)"
  check "(d) nothing escaped the state dir" "absent absent" \
    "$( [[ -e "$STATE/etc" ]] && echo present || echo absent) $( [[ -e "$E2E_TMP/etc" ]] && echo present || echo absent)"
  check "(d) dm not mounted" 0 "$(mount_count "$(vol_mnt dm)")"
  check "(d) Mount dm still works" "" "$(mount_id dm ok)"
  check "(d) Unmount dm still works" "" "$(unmount_id dm ok)"
  check_ok "(d) berthd stops cleanly on SIGTERM after the fault" stop_berthd
fi
umount_under "$STATE"

# -- (e) importing amazon-ecs-volume-plugin's state ----------------------------------------------
log "(e) --import-ecs-state"
ecs_path="$E2E_TMP/ecs/ecsvol"
mkdir -p "$ecs_path"
# The ECS plugin left the volume mounted for task c1.
mount -t tmpfs -o size=1m tmpfs "$ecs_path"
echo from-ecs >"$ecs_path/marker"
cat >"$E2E_TMP/ecs-state.json" <<EOF
{"volumes":{"ecsvol":{"type":"efs","path":"$ecs_path","options":{"type":"tmpfs","device":"tmpfs"},"createdAt":"2026-01-01T00:00:00Z","mounts":{"c1":null}}}}
EOF
STATE="$E2E_TMP/state-e"
"$BERTHD" --state-dir "$STATE" --docker-socket "$PLUGIN_SOCK" --admin-socket "$ADMIN_SOCK" \
  "${METRICS_ARGS[@]}" "${DOCKER_API_ARGS[@]}" \
  --import-ecs-state "$E2E_TMP/ecs-state.json" >>"$BERTHD_LOG" 2>&1 &
BERTHD_PID=$!
imported=""
if wait_until 30 berthd_answers "$PLUGIN_SOCK"; then
  imported=serving
elif ! kill -0 "$BERTHD_PID" 2>/dev/null; then
  wait "$BERTHD_PID"
  rc=$?
  BERTHD_PID=""
  if ((rc == 0)); then
    # A one-shot import: it exits after writing the state; start berthd normally.
    start_berthd "$STATE" "$PLUGIN_SOCK" "$ADMIN_SOCK" && imported=one-shot
  else
    tail -n 20 "$BERTHD_LOG"
  fi
fi
if [[ -n "$imported" ]]; then
  pass "(e) berthd --import-ecs-state imports and serves ($imported)"
  check "(e) List shows ecsvol" ecsvol "$(listed)"
  check "(e) berthctl: c1 counted once (null -> 1)" "c1=1" "$(ctl_mounts ecsvol)"
  err=$(plugin_err Remove '{"Name":"ecsvol"}')
  check_contains "(e) Remove is refused while c1 holds it" "in use" "$err"
  mp=$(json_get "$(plugin Path '{"Name":"ecsvol"}' 2>&1)" 'd.get("Mountpoint", "")' 2>&1)
  check_nonempty "(e) Path of ecsvol" "$mp"
  check "(e) the mountpoint shows the data of the ECS mount" from-ecs "$(cat "$mp/marker" 2>&1)"
  check "(e) Unmount c1" "" "$(unmount_id ecsvol c1)"
  if wait_until 10 is_unmounted "$ecs_path" && wait_until 10 is_unmounted "$STATE/volumes/ecsvol/mnt"; then
    pass "(e) no mount of ecsvol left after its last Unmount"
  else
    fail "(e) no mount of ecsvol left after its last Unmount" "no mountinfo entry for $ecs_path or $STATE/volumes/ecsvol/mnt" \
      "got: $(grep -F -e " $ecs_path " -e " $STATE/volumes/ecsvol/mnt " /proc/self/mountinfo | head -3)"
  fi
  check "(e) Remove after the last Unmount" "" "$(plugin_err Remove '{"Name":"ecsvol"}')"
  check "(e) STATE/volumes/ecsvol is gone" absent \
    "$( [[ -e "$STATE/volumes/ecsvol" ]] && echo present || echo absent)"
  check_ok "(e) berthd stops cleanly on SIGTERM after the fault" stop_berthd
else
  fail "(e) berthd --import-ecs-state imports and serves" "it serves (or exits 0 and a plain start serves)" "see the log above"
  kill9_berthd
fi
umount_under "$E2E_TMP/ecs"
umount_under "$STATE"

e2e_finish
