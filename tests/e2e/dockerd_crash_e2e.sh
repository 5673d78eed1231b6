#!/usr/bin/env bash
# Mount IDs dockerd forgot (docs/design.md), end to end: mount-ID counts follow dockerd's
# truth when its Unmounts never come.
# A private dockerd (vfs, no networking) uses berthd as its volume plugin; berthd follows it
# through --docker-api with a short --die-grace-ms. dockerd is killed with SIGKILL and
# restarted under containers on berth volumes; every case is checked on the host
# (/proc/self/mountinfo), through berthctl and in berthd's log.
#
#   usage: dockerd_crash_e2e.sh PATH/TO/berthd PATH/TO/berthctl
#
# (a) SIGKILL under a running container: the stale ID is released, the volume unmounted
#     and removable
# (b) a --restart always container comes back with a count of exactly 1; berthctl release
#     of its ID is refused naming it; after docker rm -f the volume unmounts
# (c) live-restore: the container survives, its count and mount are kept past the grace
# (d) docker cp into a stopped container while reconciliation runs (after a die, after a
#     dockerd restart that releases another ID of the same volume): the copy's mount stays
# (e) a mount ID that names no container (ECS's own IDs) is never released automatically;
#     berthctl release drops it (reason operator)
# (f) dockerd absent at berthd start: berthd serves, catches up when dockerd appears
# Exit 77 (skipped, loudly) when root, docker.io or a working dockerd is missing.

source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/dockerd_lib.sh"

e2e_init "${1:-}" "${2:-}"
need_cmd tar tar
DIE_GRACE_MS=2000
GRACE_S=$((DIE_GRACE_MS / 1000))
dockerd_first_start
IMG="berth-crash-busybox:latest"
if ! make_busybox_image "$IMG"; then
  skip "could not import the busybox image into dockerd"
fi
# berthd reaches dockerd through a symlink: case (d) takes it away for a moment, so that
# berthd sees the restarted dockerd only after the copy has mounted.
API_LINK="$E2E_TMP/docker-api.sock"
ln -s "$DOCKER_DIR/docker.sock" "$API_LINK"
API="unix://$API_LINK"
if berthd_has_docker_api; then
  pass "berthd knows --docker-api and --die-grace-ms"
else
  fail "berthd knows --docker-api and --die-grace-ms" \
    "berthd --help names no --docker-api: it cannot follow dockerd; the cases run without it"
fi
if ! start_berthd_api "$API"; then
  fail "berthd starts with --docker-api $API" "see the log above"
  e2e_finish
fi
pass "berthd starts with --docker-api $API --die-grace-ms $DIE_GRACE_MS"
if wait_until 15 metric_is berth_docker_engine_up 1; then
  pass "berth_docker_engine_up 1 once berthd reaches dockerd"
else
  fail "berth_docker_engine_up 1 once berthd reaches dockerd" "got: '$(metric berth_docker_engine_up)'"
fi

# run_bg NAME VOLUME [DOCKER RUN ARGS...]: a long-running container with VOLUME at /data.
# Its stop signal is SIGKILL: busybox sleep as PID 1 ignores SIGTERM, and a restarting
# dockerd waits 10 s for each container it stops before it answers.
run_bg() {
  local name="$1" vol="$2"
  shift 2
  dk run -d --network none --stop-signal KILL --name "$name" "$@" -v "$vol:/data" "$IMG" sleep 1000
}

vol_create() {
  dk volume create -d "$DRIVER" "$1"
}

# check_names WHAT ID TEXT: TEXT holds ID's first 12 characters (Docker's short ID); an
# empty ID (an earlier step failed) fails too.
check_names() {
  if [[ -z "$2" ]]; then
    fail "$1" "no ID to look for (an earlier step failed)"
  else
    check_contains "$1" "${2:0:12}" "$3"
  fi
}

# saw_new_dockerd MARK: berthd logged, after line MARK, that the running dockerd is new.
saw_new_dockerd() {
  log_since "$1" | grep "dockerd $DOCKERD_PID@[0-9]* is new" >/dev/null
}

# check_reconciled WHAT MARK: waits (20 s) for berthd's "dockerd ... is new" line.
check_reconciled() {
  if wait_until 20 saw_new_dockerd "$2"; then
    pass "$1: berthd saw the new dockerd ($(log_since "$2" | grep -o "dockerd $DOCKERD_PID@[0-9]* is new[^:]*" | head -1))"
  else
    fail "$1: berthd saw the new dockerd (pid $DOCKERD_PID)" \
      "no 'dockerd $DOCKERD_PID@... is new' line; berthd's log since:" \
      "$(log_since "$2" | grep -iE 'docker|released' | tail -n 8)"
  fi
}

# check_released WHAT VOLUME ID REASON MARK: waits (20 s) for the release of ID's count.
check_released() {
  local what="$1" vol="$2" id="$3" reason="$4" mark="$5" line
  if wait_until 20 has_released "$vol" "$mark"; then
    line=$(released_lines "$vol" "$mark" | head -1)
    pass "$what: berthd released a mount ID of $vol ($line)"
    check_names "$what: the release names the ID" "$id" "$line"
    check "$what: the release's reason" "$reason" "$(release_reason_of "$line")"
  else
    fail "$what: berthd released mount ID ${id:0:12} of $vol" "no 'volume $vol released mount ID' line;" \
      "berthd's log since: $(log_since "$mark" | grep -iE 'docker|released|reconcil' | tail -n 8)"
  fi
}

# -- (e) set up first: an ID that names no container lives through every case --------
log "(e) a plugin Mount by hand with an ID of its own (ecs-task-1)"
check_ok "(e) docker volume create ve" vol_create ve
check "(e) Mount of ve with ID ecs-task-1 by hand (curl: not dockerd)" "" "$(mount_id ve ecs-task-1)"
check_mounted "(e) after the hand-made Mount" ve
check_contains "(e) berthctl inspect: no dockerd made ecs-task-1" "ecs-task-1: count 1, dockerd unknown, last mounted $(date -u +%Y-%m-%dT)" \
  "$("$BERTHCTL" --socket "$ADMIN_SOCK" inspect ve 2>&1)"

# -- (a) SIGKILL under a running container ---------------------------------------------
log "(a) SIGKILL dockerd under a running container, restart it"
check_ok "(a) docker volume create va" vol_create va
check_ok "(a) container ca uses va" run_bg ca va
check_mounted "(a) while ca runs" va
ida=$(ctl_only_id va)
check_nonempty "(a) berthctl: one mount ID for ca" "$ida"
inspect=$("$BERTHCTL" --socket "$ADMIN_SOCK" inspect va 2>&1)
check_contains "(a) berthctl inspect: ca's ID was mounted by this dockerd" \
  "$ida: count 1, dockerd $DOCKERD_PID@" "$inspect"
check_contains "(a) berthctl inspect: when it was last mounted" "last mounted $(date -u +%Y-%m-%dT)" "$inspect"
mark=$(log_mark)
dockerd_kill9
check_ok "(a) dockerd starts again after SIGKILL" dockerd_start
check "(a) ca died with dockerd (no live-restore)" exited "$(container_state ca)"
check_reconciled "(a)" "$mark"
check_released "(a)" va "$ida" stale_instance "$mark"
check_unmounted "(a) after the release" va
check "(a) berthctl: va counts no mount ID" 0 "$(ctl_total va)"
check_ok "(a) docker rm ca" dk rm ca
check_ok "(a) docker volume rm va succeeds" dk volume rm va

# -- (b) --restart always ----------------------------------------------------------------
log "(b) a --restart always container, SIGKILL and restart dockerd"
check_ok "(b) docker volume create vb" vol_create vb
check_ok "(b) container cb (--restart always) uses vb" run_bg cb vb --restart always
check_mounted "(b) while cb runs" vb
idb=$(ctl_only_id vb)
check_nonempty "(b) berthctl: one mount ID for cb" "$idb"
cb_id=$("$DOCKER_CLI" inspect -f '{{.Id}}' cb 2>/dev/null)
check_nonempty "(b) cb's container ID" "$cb_id"
started=$(container_started_at cb)
mark=$(log_mark)
dockerd_kill9
check_ok "(b) dockerd starts again after SIGKILL" dockerd_start
cb_restarted() {
  container_is cb running && [[ "$(container_started_at cb)" != "$started" ]]
}
if wait_until 30 cb_restarted; then
  pass "(b) cb runs again, started by the new dockerd"
else
  fail "(b) cb runs again, started by the new dockerd" "state $(container_state cb), started $(container_started_at cb) (before: $started)"
fi
check_reconciled "(b)" "$mark"
sleep $((GRACE_S + 1)) # the die grace of the killed run passes
check "(b) berthctl: count of exactly 1 (berthctl inspect --json)" 1 "$(ctl_total vb)"
check "(b) the same mount ID (dockerd keeps it in config.v2.json)" "$idb" "$(ctl_only_id vb)"
check_mounted "(b) while cb runs again" vb
check_ok "(b) cb writes to vb" dk exec cb sh -c 'echo again > /data/b'
check "(b) the write reached the host volume" again "$(cat "$(vol_mnt vb)/b" 2>&1)"
if [[ -n "$(released_lines vb "$mark")" ]]; then
  log "(b) note: berthd released an ID of vb before cb's new Mount: $(released_lines vb "$mark" | head -1)"
fi
check_fails "(b) berthctl release of running cb's mount ID is refused" ctl_release vb "$idb"
check_names "(b) the refusal names the container" "$cb_id" "$LAST_OUTPUT"
check "(b) berthctl: count still 1 after the refusal" 1 "$(ctl_total vb)"
check_ok "(b) docker rm -f cb" dk rm -f cb
check_unmounted "(b) after docker rm -f" vb
check "(b) berthctl: vb counts no mount ID" 0 "$(ctl_total vb)"
check_ok "(b) docker volume rm vb" dk volume rm vb

# -- (c) live-restore ---------------------------------------------------------------------
log "(c) live-restore: the container survives a dockerd SIGKILL and restart"
term_dockerd
check_ok "(c) dockerd starts with --live-restore" dockerd_start --live-restore
check_ok "(c) docker volume create vc" vol_create vc
check_ok "(c) container cc uses vc" run_bg cc vc
check_mounted "(c) while cc runs" vc
idc=$(ctl_only_id vc)
check_nonempty "(c) berthctl: one mount ID for cc" "$idc"
cc_pid=$(container_pid cc)
mark=$(log_mark)
dockerd_kill9
check_ok "(c) dockerd starts again with --live-restore" dockerd_start --live-restore
check "(c) cc survived: running" running "$(container_state cc)"
check "(c) cc survived: the same process" "$cc_pid" "$(container_pid cc)"
check_reconciled "(c)" "$mark"
sleep $((GRACE_S + 1)) # longer than the die grace
check "(c) berthctl: cc's mount ID and count kept past the grace" "$idc=1" "$(ctl_mounts vc)"
check "(c) vc still mounted on the host past the grace" 1 "$(mount_count "$(vol_mnt vc)")"
check "(c) no release of vc" "" "$(released_lines vc "$mark")"
check_ok "(c) cc writes to vc" dk exec cc sh -c 'echo restored > /data/c'
check "(c) the write reached the host volume" restored "$(cat "$(vol_mnt vc)/c" 2>&1)"
check_ok "(c) docker rm -f cc" dk rm -f cc
check_unmounted "(c) after docker rm -f" vc
check_ok "(c) docker volume rm vc" dk volume rm vc
term_dockerd
check_ok "(c) dockerd starts again without live-restore" dockerd_start

# -- (d) docker cp into a stopped container while reconciliation runs --------------------
log "(d) docker cp into a stopped container after a die"
check_ok "(d) docker volume create vd" vol_create vd
check_ok "(d) container cd writes to vd and exits" \
  dk run --name cd --network none -v vd:/data "$IMG" sh -c 'echo old > /data/old'
check "(d) cd is stopped" exited "$(container_state cd)"
check_unmounted "(d) after cd exits" vd
# copy_slowly FILE SECONDS: docker cp of a tar that takes SECONDS to arrive, into cd:/data.
copy_slowly() {
  slow_tar "$1" "$2" | dk cp - cd:/data
}
# copied_whole FILE SECONDS: the file is in vd's storage, all of it.
copied_whole() {
  [[ "$(stat -c %s "$STATE/volumes/vd/data/$1" 2>/dev/null)" == "$(($2 * 4 * 64))" ]]
}
mark=$(log_mark)
check_ok "(d) another container on vd exits now (a die event; the grace starts)" \
  dk run --name cd2 --network none -v vd:/data "$IMG" true
copy_slowly d1.txt $((GRACE_S + 2)) >"$E2E_TMP/cp1.out" 2>&1 &
cp_pid=$!
on_cleanup "kill $cp_pid"
if wait_until 10 is_mounted "$(vol_mnt vd)"; then
  pass "(d) the copy's Mount came"
else
  fail "(d) the copy's Mount came" "vd not mounted 10 s after docker cp started"
fi
sleep "$GRACE_S.5" # past cd2's die grace, while the copy still streams
check "(d) vd still mounted while the copy streams past the die grace" 1 "$(mount_count "$(vol_mnt vd)")"
check "(d) berthctl: the copy's mount is counted" 1 "$(ctl_total vd)"
wait_until 20 bash -c "! kill -0 $cp_pid"
wait "$cp_pid"
rc=$?
check "(d) docker cp after a die succeeds (exit 0; $(head -c 200 "$E2E_TMP/cp1.out"))" 0 "$rc"
check "(d) the copied file arrived whole" yes "$(copied_whole d1.txt $((GRACE_S + 2)) && echo yes || echo no)"
check "(d) no release of vd after the die" "" "$(released_lines vd "$mark")"
check_unmounted "(d) after the copy" vd

log "(d) docker cp into a stopped container while a dockerd restart is reconciled"
# A container on the same volume dies with dockerd: its ID is stale after the restart and
# is released while the copy streams; the copy's own ID must stay.
check_ok "(d) container cd3 uses vd" run_bg cd3 vd
id3=$(ctl_only_id vd)
check_nonempty "(d) berthctl: one mount ID for cd3" "$id3"
mark=$(log_mark)
# berthd's way to the Engine API goes away until the copy has mounted: then the copy's
# Mount is counted before berthd can reconcile (a Mount of the new dockerd tells berthd
# of it, but nothing is decided while the API does not answer).
rm -f "$API_LINK"
dockerd_kill9
check_ok "(d) dockerd starts again after SIGKILL" dockerd_start
copy_slowly d2.txt 8 >"$E2E_TMP/cp2.out" 2>&1 &
cp_pid=$!
on_cleanup "kill $cp_pid"
vd_counts_two() {
  [[ "$(ctl_total vd)" == 2 ]]
}
if wait_until 10 vd_counts_two; then
  pass "(d) the copy's Mount is counted beside cd3's stale ID"
else
  fail "(d) the copy's Mount is counted beside cd3's stale ID" "got: $(ctl_mounts vd)"
fi
ln -s "$DOCKER_DIR/docker.sock" "$API_LINK"
check_reconciled "(d)" "$mark"
check_released "(d) cd3's stale ID" vd "$id3" stale_instance "$mark"
if kill -0 "$cp_pid" 2>/dev/null; then
  pass "(d) the copy still streams after the release"
else
  fail "(d) the copy still streams after the release" "it ended before: the case proves nothing"
fi
check "(d) vd still mounted for the copy after cd3's release" 1 "$(mount_count "$(vol_mnt vd)")"
cp_ids=$(ctl_mounts vd)
check "(d) berthctl: only the copy's mount ID, count 1" 1 "$(ctl_total vd)"
check "(d) cd3's ID is gone" "" "$(grep -o "$id3" <<<"$cp_ids")"
wait_until 20 bash -c "! kill -0 $cp_pid"
wait "$cp_pid"
rc=$?
check "(d) docker cp during reconciliation succeeds (exit 0; $(head -c 200 "$E2E_TMP/cp2.out"))" 0 "$rc"
check "(d) the copied file arrived whole" yes "$(copied_whole d2.txt 8 && echo yes || echo no)"
check "(d) only cd3's ID was released" 1 "$(released_lines vd "$mark" | wc -l)"
# The case's premise: the copy's Mount was counted before the release, so the two overlap.
first_of() {
  log_since "$mark" | grep -n -E "$1" | head -1 | cut -d: -f1
}
cp_line=$(first_of "volume vd mount(ed| counted)")
rel_line=$(first_of "volume vd released mount ID")
check "(d) the copy's Mount came before cd3's release (they overlap)" yes \
  "$([[ -n "$cp_line" && -n "$rel_line" ]] && ((cp_line < rel_line)) && echo yes || echo "no (Mount at log line ${cp_line:-none}, release at ${rel_line:-none})")"
check_unmounted "(d) after the copy" vd
check_ok "(d) docker rm cd cd2 cd3" dk rm cd cd2 cd3
check_ok "(d) docker volume rm vd" dk volume rm vd

# -- (e) the ID that names no container ---------------------------------------------------
log "(e) ecs-task-1 after every restart above"
mark=$(log_mark)
sleep $((GRACE_S + 1))
check "(e) berthctl: ecs-task-1 still counted after every dockerd restart above and the grace" \
  "ecs-task-1=1" "$(ctl_mounts ve)"
check "(e) ve still mounted on the host" 1 "$(mount_count "$(vol_mnt ve)")"
check "(e) reconciliation never released an ID of ve" "" "$(released_lines ve)"
check_fails "(e) berthctl release of an ID ve does not count is refused" ctl_release ve ecs-task-2
check_contains "(e) the refusal names the ID" "ecs-task-2" "$LAST_OUTPUT"
check_ok "(e) berthctl release ve ecs-task-1" ctl_release ve ecs-task-1
out=$(cat "$E2E_TMP/.cmd-out")
check_contains "(e) berthctl says what it dropped" "(count 1 dropped)" "$out"
check_contains "(e) berthctl names the volume" "of volume ve" "$out"
line=$(released_lines ve "$mark" | head -1)
check_contains "(e) berthd's log names the ID" "ecs-task-1" "$line"
check "(e) berthd's log gives the reason" operator "$(release_reason_of "$line")"
check_unmounted "(e) after the operator's release" ve
check "(e) berthctl: ve counts no mount ID" 0 "$(ctl_total ve)"
check_ok "(e) docker volume rm ve" dk volume rm ve

# -- (f) dockerd absent at berthd start ------------------------------------------------------
log "(f) dockerd absent when berthd starts"
check_ok "(f) docker volume create vf" vol_create vf
check_ok "(f) container cf uses vf" run_bg cf vf
check_mounted "(f) while cf runs" vf
idf=$(ctl_only_id vf)
check_nonempty "(f) berthctl: one mount ID for cf" "$idf"
check_ok "(f) berthd stops (SIGTERM)" stop_berthd
dockerd_kill9
mark=$(log_mark)
if start_berthd_api "$API"; then
  pass "(f) berthd starts while dockerd is down (plugin answers Plugin.Activate)"
else
  fail "(f) berthd starts while dockerd is down" "see the log above"
  e2e_finish
fi
check_contains "(f) berthd serves VolumeDriver.List" vf "$(listed)"
check "(f) berthctl answers: cf's count kept" "$idf=1" "$(ctl_mounts vf)"
if wait_until 10 metric_is berth_docker_engine_up 0; then
  pass "(f) berth_docker_engine_up 0 while dockerd is down"
else
  fail "(f) berth_docker_engine_up 0 while dockerd is down" "got: '$(metric berth_docker_engine_up)'"
fi
check_nonempty "(f) berthd logs that dockerd does not answer" \
  "$(log_since "$mark" | grep -E 'dockerd does not answer|Docker Engine API.*unreachable' | head -1)"
sleep 1
check "(f) nothing released while dockerd is down" "" "$(released_lines vf "$mark")"
check_ok "(f) dockerd appears" dockerd_start
if wait_until 20 metric_is berth_docker_engine_up 1; then
  pass "(f) berth_docker_engine_up 1 once dockerd appears"
else
  fail "(f) berth_docker_engine_up 1 once dockerd appears" "got: '$(metric berth_docker_engine_up)'"
fi
check_nonempty "(f) berthd logs that dockerd answers again" \
  "$(log_since "$mark" | grep -E 'dockerd answers again|Docker Engine API.*back' | head -1)"
check_reconciled "(f)" "$mark"
check_released "(f) the stale count from before" vf "$idf" stale_instance "$mark"
check_unmounted "(f) after the catch-up" vf
check_ok "(f) docker rm cf" dk rm cf
check_ok "(f) docker volume rm vf" dk volume rm vf

check "no host mount left under the state dir" 0 \
  "$(awk -v d="$STATE/" 'index($5, d) == 1' /proc/self/mountinfo | wc -l)"
check_ok "berthd stops on SIGTERM" stop_berthd
log "took $SECONDS s"
e2e_finish
